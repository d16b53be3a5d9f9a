/**
 * `@stint/postgres-driver/internal`: helpers that stint's own packages (the
 * dashboard, the CLI) share with the PostgreSQL store, and no application
 * needs. It is not public API: any name here may change or go in any
 * release, without a note in the changelog. Applications import
 * `@stint/postgres-driver`.
 *
 * @example
 * ```ts
 * // In a package of this repository only:
 * import { isKysely } from "@stint/postgres-driver/internal";
 * if (!isKysely(options.db)) throw new ConfigError("db", "must be a Kysely instance");
 * ```
 *
 * @packageDocumentation
 */
export { isKysely } from "./is-kysely";
