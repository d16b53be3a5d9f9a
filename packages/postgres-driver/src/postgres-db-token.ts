import type { Kysely } from "kysely";
import type { InjectionToken } from "tsyringe";

/**
 * Token of the `Kysely` instance `registerPostgresDriver` opened, for an
 * application that wants to run its own queries (or transactions that
 * enqueue jobs) on the same pool.
 *
 * @example
 * ```ts
 * constructor(@inject(POSTGRES_DB) private readonly db: Kysely<Database>) {}
 * ```
 */
export const POSTGRES_DB: InjectionToken<Kysely<any>> = Symbol.for("stint.PostgresDb");
