import type { RawBuilder } from "kysely";

/**
 * One forward-only step of the schema. Its statements run in order inside
 * one transaction, and the version is recorded in `<schema>.migrations` by
 * the same transaction. A released migration never changes; a change to the
 * schema is a new migration with the next version.
 *
 * Statements take the schema name (already validated) and must reference
 * every identifier through `sql.id` / `sql.ref` and carry no parameters, so
 * that their text can also be printed (see `migrationSql`).
 *
 * @example
 * ```ts
 * export const addJobTags: Migration = {
 *   version: 2,
 *   name: "add-job-tags",
 *   statements: (schema) => [sql`ALTER TABLE ${sql.id(schema, "jobs")} ADD COLUMN tags text[]`],
 * };
 * ```
 */
export interface Migration {
  /** 1, 2, 3, … with no gaps. */
  readonly version: number;
  /** A short kebab-case description, stored with the version. */
  readonly name: string;
  /** The statements to run, for the given schema. */
  statements(schema: string): readonly RawBuilder<unknown>[];
}
