/**
 * `text` as one word of a POSIX shell command line: as it is when it holds
 * only characters no shell treats specially, else in single quotes. For the
 * commands the CLI suggests, which an operator copies and pastes.
 *
 * @example
 * ```ts
 * shellWord("tenant-42"); // "tenant-42"
 * shellWord("acme corp's"); // "'acme corp'\''s'"
 * ```
 */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}
