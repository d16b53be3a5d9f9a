import type { Kysely } from "kysely";
import type { InjectionToken } from "tsyringe";
import type { ConnectionVariables } from "./connection/connection-variables";

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

/**
 * Token of the connection settings `registerPostgresDriver` resolved (the
 * prepared-statement mode and the session URL, each with where it came
 * from), for `stint run --print-config` and `stint doctor`.
 *
 * @example
 * ```ts
 * const { preparedStatements } = container.resolve(POSTGRES_CONNECTION_SETTINGS);
 * ```
 */
export const POSTGRES_CONNECTION_SETTINGS: InjectionToken<ConnectionVariables> = Symbol.for("stint.PostgresConnectionSettings");
