/** A statement rewritten for a library that binds values to `?` in order (knex's `raw`). */
export interface QuestionMarkStatement {
  /** The text with each `$n` replaced by `?` and every other `?` written `\?`. */
  readonly sql: string;
  /** One value per `?`, in the order they appear (a `$n` used twice gives its value twice). */
  readonly bindings: readonly unknown[];
}

const IDENTIFIER_CHAR = /[A-Za-z0-9_$\u0080-\uffff]/;
const DOLLAR_TAG = /^\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/;

/**
 * Rewrites a statement written with PostgreSQL's `$1…$n` parameters for
 * knex's `raw(sql, bindings)`, which binds its values to `?` marks in
 * order. Parameters are found outside string literals, quoted
 * identifiers, dollar-quoted strings and comments; a `?` anywhere is
 * written `\?`, which knex sends as a plain `?` (knex does not read
 * quotes, so it would take even a `?` inside a literal for a binding).
 *
 * Throws a `TypeError` for a backslash right before a mark: knex would
 * read it as escaping the mark.
 *
 * @example
 * ```ts
 * toQuestionMarks({ text: "SELECT $1::int AS a, $1::int AS b, '?' AS c", values: [7] });
 * // { sql: "SELECT ?::int AS a, ?::int AS b, '\\?' AS c", bindings: [7, 7] }
 * ```
 */
export function toQuestionMarks(statement: { readonly text: string; readonly values: readonly unknown[] }): QuestionMarkStatement {
  const { text, values } = statement;
  const bindings: unknown[] = [];
  let sql = "";
  let i = 0;
  const mark = (written: string): void => {
    if (sql.endsWith("\\")) throw new TypeError(`a backslash stands right before a parameter at offset ${i}, which knex would read as an escape`);
    sql += written;
  };
  /** Copies text up to (not including) `end`, escaping any `?` in it. */
  const copyTo = (end: number): void => {
    for (; i < end; i += 1) {
      const char = text[i]!;
      if (char === "?") mark("\\?");
      else sql += char;
    }
  };
  while (i < text.length) {
    const char = text[i]!;
    const next = text[i + 1];
    if (char === "'") copyTo(endOfQuoted(text, i, "'", isEscapeString(text, i)));
    else if (char === '"') copyTo(endOfQuoted(text, i, '"', false));
    else if (char === "-" && next === "-") copyTo(endOfLine(text, i));
    else if (char === "/" && next === "*") copyTo(endOfBlockComment(text, i));
    else if (char === "$" && next !== undefined && next >= "0" && next <= "9" && !followsIdentifier(text, i)) {
      const digits = /^\d+/.exec(text.slice(i + 1))![0];
      const index = Number(digits) - 1;
      if (index < 0 || index >= values.length) throw new TypeError(`parameter $${digits} has no value (${values.length} given)`);
      mark("?");
      bindings.push(values[index]);
      i += 1 + digits.length;
    } else if (char === "$" && !followsIdentifier(text, i) && DOLLAR_TAG.test(text.slice(i))) {
      copyTo(endOfDollarQuoted(text, i, DOLLAR_TAG.exec(text.slice(i))![0]));
    } else copyTo(i + 1);
  }
  return { sql, bindings };
}

/** The index just past the quote that closes the one at `start` (a doubled quote is part of the text). */
function endOfQuoted(text: string, start: number, quote: string, backslashEscapes: boolean): number {
  let i = start + 1;
  while (i < text.length) {
    if (backslashEscapes && text[i] === "\\") i += 2;
    else if (text[i] === quote && text[i + 1] === quote) i += 2;
    else if (text[i] === quote) return i + 1;
    else i += 1;
  }
  return text.length;
}

function endOfLine(text: string, start: number): number {
  const end = text.indexOf("\n", start);
  return end === -1 ? text.length : end + 1;
}

/** PostgreSQL's block comments nest. */
function endOfBlockComment(text: string, start: number): number {
  let depth = 0;
  let i = start;
  while (i < text.length) {
    if (text.startsWith("/*", i)) {
      depth += 1;
      i += 2;
    } else if (text.startsWith("*/", i)) {
      depth -= 1;
      i += 2;
      if (depth === 0) return i;
    } else i += 1;
  }
  return text.length;
}

function endOfDollarQuoted(text: string, start: number, tag: string): number {
  const end = text.indexOf(tag, start + tag.length);
  return end === -1 ? text.length : end + tag.length;
}

/** `E'…'` (or `e'…'`) is a string in which a backslash escapes the next character. */
function isEscapeString(text: string, quoteAt: number): boolean {
  return (text[quoteAt - 1] === "E" || text[quoteAt - 1] === "e") && !followsIdentifier(text, quoteAt - 1);
}

/** True when the character before `at` continues an identifier (`a$1` is a name, not a parameter). */
function followsIdentifier(text: string, at: number): boolean {
  return at > 0 && IDENTIFIER_CHAR.test(text[at - 1]!);
}
