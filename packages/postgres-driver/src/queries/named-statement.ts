import { createHash } from "node:crypto";
import type { RawBuilder } from "kysely";
import { COMPILE_ONLY } from "../compile-only";
import type { Statement } from "../connection/statement";

/** Names already computed, by statement text (a few per schema: the hot statements and their variants). */
const NAMES = new Map<string, string>();
const MAX_NAMES = 1_000;

/**
 * The prepared-statement name of a statement text: a hash of the whole
 * text, so two texts never share a name and the same text always gets the
 * same one.
 *
 * @example
 * ```ts
 * statementName("UPDATE …"); // "stint_3f9a0c1d5e7b24680a1c9e2f"
 * ```
 */
export function statementName(text: string): string {
  let name = NAMES.get(text);
  if (name === undefined) {
    name = `stint_${createHash("sha256").update(text).digest("hex").slice(0, 24)}`;
    if (NAMES.size >= MAX_NAMES) NAMES.clear();
    NAMES.set(text, name);
  }
  return name;
}

/**
 * Compiles a hot statement whose text is the same on every call (only its
 * values change) into a named {@link Statement}, to be prepared once per
 * connection where the runner's mode allows.
 *
 * @example
 * ```ts
 * const { rows } = await statements.run(namedStatement(sql`SELECT … WHERE id = ${id}`));
 * ```
 */
export function namedStatement(statement: RawBuilder<unknown>): Statement {
  const { sql: text, parameters } = statement.compile(COMPILE_ONLY);
  return { name: statementName(text), text, values: parameters };
}

/**
 * Compiles a statement for PostgreSQL without a connection: its text and
 * its parameters in `$1…$n` order.
 *
 * @example
 * ```ts
 * const { text, values } = compileStatement(sql`SELECT ${7}::integer AS n`);
 * ```
 */
export function compileStatement(statement: RawBuilder<unknown>): { readonly text: string; readonly values: readonly unknown[] } {
  const { sql: text, parameters } = statement.compile(COMPILE_ONLY);
  return { text, values: parameters };
}
