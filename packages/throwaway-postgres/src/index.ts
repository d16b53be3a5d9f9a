// Public API of @stint/throwaway-postgres (private): a throwaway PostgreSQL for scripts/with-postgres.mjs and the chaos suite.
export { ThrowawayPostgres } from "./throwaway-postgres";
export type { PasswordAuth, ThrowawayPostgresOptions } from "./throwaway-postgres";
export { StartFailure } from "./start-failure";
export { ThrowawayPgBouncer } from "./throwaway-pgbouncer";
export type { ThrowawayPgBouncerOptions, PoolMode } from "./throwaway-pgbouncer";
