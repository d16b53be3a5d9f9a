// Public API of @stint/postgres-driver. Everything a user imports is re-exported here, explicitly.
export { PostgresJobStore } from "./postgres-job-store";
export type { PostgresJobStoreOptions } from "./postgres-job-store";
export { registerPostgresDriver } from "./register-postgres-driver";
export type { PostgresDriverOptions, PostgresDriverRegistration, PostgresDriverHandle } from "./register-postgres-driver";
export { POSTGRES_CONNECTION_SETTINGS, POSTGRES_DB } from "./postgres-db-token";
export { createDatabase } from "./create-database";
export type { DatabaseConnection, DatabaseHandle, DatabaseOptions, PoolSettings } from "./create-database";
export type { StatementRunner } from "./connection/statement-runner";
export type { Statement, StatementResult } from "./connection/statement";
export type { PreparedStatementsMode } from "./connection/prepared-statements";
export type { DriverWarning, WarningListener } from "./connection/driver-warning";
export { SessionCheck } from "./connection/session-check";
export type { FirstLook, SessionCheckOptions, SessionKind } from "./connection/session-check";
export { resolveConnectionVariables, PREPARED_STATEMENTS_VARIABLE, SESSION_URL_VARIABLE } from "./connection/connection-variables";
export type { ConnectionSetting, ConnectionVariables, SettingSource } from "./connection/connection-variables";
export { interpretError, isRetryableSqlState, type ErrorScope } from "./interpret-error";
export { isKysely } from "./is-kysely";

export { PostgresWakeupSource } from "./postgres-wakeup-source";
export type { PostgresWakeupSourceOptions } from "./postgres-wakeup-source";
export { PostgresLeaderLock } from "./postgres-leader-lock";
export { PostgresCompletionSource } from "./postgres-completion-source";
export type { PostgresCompletionSourceOptions } from "./postgres-completion-source";
export { completionChannel } from "./completion-channel";
export type { PostgresLeaderLockOptions } from "./postgres-leader-lock";
export type { SessionClientOptions } from "./session-client-options";
export { wakeupChannel } from "./wakeup-channel";
export { diagnose, schemaStatus } from "./diagnose";
export type { Diagnosis, DiagnosisCheck, DiagnosisSeverity, DiagnoseOptions, SchemaStatus } from "./diagnose";
export type { ConnectionToDiagnose } from "./diagnose-connection";

export { migrate } from "./schema/migrate";
export type { MigrateOptions, MigrateResult } from "./schema/migrate";
export { migrationSql } from "./schema/migration-sql";
export { rolesSql, DEFAULT_ROLES } from "./schema/roles";
export type { StintRoles } from "./schema/roles";
export { describeSchema } from "./schema/describe-schema";
export { dropSchema } from "./schema/drop-schema";
export { DEFAULT_SCHEMA } from "./schema/default-schema";
export { MIGRATIONS } from "./schema/migrations/all-migrations";
export type { Migration } from "./schema/migrations/migration";

export { PostgresJobBrowser, MAX_ERROR_SEARCH_LENGTH } from "./postgres-job-browser";
export type { PostgresJobBrowserOptions } from "./postgres-job-browser";
export type { BrowseJobsParams, JobPage } from "./queries/browse-jobs";
export type { JobSummary } from "./queries/job-summary-row";
export type { RecentThroughput, RecentThroughputParams, QueueThroughput } from "./queries/read-recent-throughput";
