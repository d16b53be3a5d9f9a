import { coerceError } from "@stint/core/internal";
import { assertSqlIdentifier, integerOption, rejectUnknownOptions } from "@stint/core/driver";
import type { Kysely } from "kysely";
import { diagnoseConnection, type ConnectionToDiagnose } from "./diagnose-connection";
import { interpretError } from "./interpret-error";
import { HISTORY_COUNT_CAP, readHistory, type HistoryState } from "./queries/diagnose-history";
import { readIdleInTransaction } from "./queries/diagnose-idle-in-transaction";
import { EXPECTED_INDEXES, readIndexes } from "./queries/diagnose-indexes";
import { readOldestTransaction } from "./queries/diagnose-oldest-transaction";
import { readSchemaVersion } from "./queries/diagnose-schema-status";
import { readStuckLeases } from "./queries/diagnose-stuck-leases";
import { readTableHealth } from "./queries/diagnose-table-health";
import { readWakeupTrigger } from "./queries/diagnose-wakeup-trigger";
import { MIGRATIONS } from "./schema/migrations/all-migrations";

/** How bad a failed check is: `error` means stint cannot work as intended. */
export type DiagnosisSeverity = "error" | "warning" | "info";

/** One finding of {@link diagnose}. A passing check has severity `info`. */
export interface DiagnosisCheck {
  /** Stable kebab-case name, e.g. `stuck-leases`. */
  readonly name: string;
  readonly ok: boolean;
  readonly severity: DiagnosisSeverity;
  /** One or two sentences for an operator, with numbers. */
  readonly detail: string;
}

/** What {@link diagnose} found, in a fixed order. */
export interface Diagnosis {
  readonly checks: readonly DiagnosisCheck[];
}

/** Thresholds of {@link diagnose}. */
export interface DiagnoseOptions {
  /** A running job's lease must have expired this long ago to count as stuck. Default 300 000 (5 min). */
  readonly stuckLeaseGraceMs?: number;
  /** A transaction open this long holds back vacuum. Default 300 000 (5 min). */
  readonly longTransactionMs?: number;
  /** A stint session idle inside a transaction this long is reported. Default 10 000. */
  readonly idleInTransactionMs?: number;
  /** `application_name` prefix of stint's sessions. Default `"stint"`. */
  readonly applicationNamePrefix?: string;
  /** Where the checked process connects: adds the `connection` check (direct, session pooler or transaction pooler). */
  readonly connection?: ConnectionToDiagnose;
}

/** Whether a schema exists and how far it is migrated. */
export interface SchemaStatus {
  readonly exists: boolean;
  /** Highest applied migration; 0 when none. */
  readonly version: number;
  /** Highest migration this version of stint knows. */
  readonly latest: number;
}

const OPTION_KEYS = ["stuckLeaseGraceMs", "longTransactionMs", "idleInTransactionMs", "applicationNamePrefix", "connection"];
const LATEST = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;
/** Dead rows worth a warning: more than this many, and more than {@link DEAD_ROW_RATIO} of the live ones. */
const DEAD_ROW_FLOOR = 10_000;
const DEAD_ROW_RATIO = 0.2;
/** The migration that moved finished jobs to `finished_jobs`. */
const HISTORY_VERSION = 15;
/** Fewer days of partitions ahead than this is worth a warning. */
const MIN_DAYS_AHEAD = 2;

/**
 * Whether `schema` exists and which migration it is at, next to the latest
 * one this stint knows — so a CLI can say "schema stint is missing — run
 * `stint migrate`" before anything else fails.
 *
 * @example
 * ```ts
 * const { exists, version, latest } = await schemaStatus(db, "stint");
 * if (!exists || version < latest) console.error("run `stint migrate`");
 * ```
 */
export async function schemaStatus(db: Kysely<any>, schema: string): Promise<SchemaStatus> {
  assertSqlIdentifier(schema, "schema");
  try {
    const { exists, version } = await readSchemaVersion(db, schema);
    return Object.freeze({ exists, version, latest: LATEST });
  } catch (thrown) {
    throw interpretError(thrown, `schema status of "${schema}"`);
  }
}

/**
 * Health checks for `stint doctor`, each a `{ name, ok, severity, detail }`:
 *
 * - `connection` (with `options.connection`) — a direct connection, a
 *   session pooler or a transaction pooler, what stint does there, and the
 *   settings that change it (warning behind a transaction pooler without a
 *   session URL: workers poll instead of being woken);
 * - `schema` — the schema exists (error; nothing else is checked without it);
 * - `migrations` — migrated up to the latest version (error when behind,
 *   warning when ahead of this stint);
 * - `indexes` — every index the migrations create exists and is valid
 *   (`pg_index.indisvalid`; error);
 * - `wakeup-trigger` — the NOTIFY trigger on `jobs` exists and is enabled (warning);
 * - `stuck-leases` — running jobs whose lease expired more than
 *   `stuckLeaseGraceMs` ago (warning: nothing rescues them);
 * - `jobs-bloat` — dead vs live tuples of `jobs` and its last vacuum (warning);
 * - `history` — the size of `finished_jobs` (rows estimated from the
 *   catalog, bytes summed over its partitions), its day partitions and the
 *   oldest one, and the rows of `finished_jobs_kept` (a report; warning
 *   only when it cannot be read);
 * - `history-partitions` — day partitions ready at least 2 days ahead
 *   (warning: without one, jobs land in `finished_jobs_kept`, which
 *   retention prunes row by row);
 * - `legacy-history` — finished jobs still in `jobs`, written before
 *   migration 15 (warning: `stint migrate` moves them);
 * - `oldest-transaction` — transactions in the database open longer than
 *   `longTransactionMs`, which hold back vacuum for everyone (warning);
 * - `idle-in-transaction` — stint sessions idle inside a transaction (warning).
 *
 * A check that cannot run (say, for lack of privileges) is reported as a
 * failed warning with the reason; an unreachable database rejects.
 *
 * @example
 * ```ts
 * const { checks } = await diagnose(db, "stint", { stuckLeaseGraceMs: 60_000 });
 * for (const check of checks) console.log(check.ok ? "ok  " : check.severity, check.name, check.detail);
 * ```
 */
export async function diagnose(db: Kysely<any>, schema: string, options: DiagnoseOptions = {}): Promise<Diagnosis> {
  rejectUnknownOptions("diagnose", options, OPTION_KEYS);
  const graceMs = integerOption("stuckLeaseGraceMs", options.stuckLeaseGraceMs ?? 300_000, 0, Number.MAX_SAFE_INTEGER);
  const longMs = integerOption("longTransactionMs", options.longTransactionMs ?? 300_000, 0, Number.MAX_SAFE_INTEGER);
  const idleMs = integerOption("idleInTransactionMs", options.idleInTransactionMs ?? 10_000, 0, Number.MAX_SAFE_INTEGER);
  const prefix = options.applicationNamePrefix ?? "stint";
  const status = await schemaStatus(db, schema);
  const connection = options.connection === undefined ? [] : [await attempt("connection", "warning", () => connectionCheck(options.connection!))];
  if (!status.exists) {
    return freeze([...connection, fail("schema", "error", `schema ${schema} is missing — run \`stint migrate\` to create it`)]);
  }
  const checks = [...connection, pass("schema", `schema ${schema} exists`), migrationsCheck(schema, status)];
  if (status.version >= 1) {
    checks.push(await attempt("indexes", "error", () => indexesCheck(db, schema, status.version)));
    if (status.version >= 2) checks.push(await attempt("wakeup-trigger", "warning", () => triggerCheck(db, schema)));
    checks.push(await attempt("stuck-leases", "warning", () => stuckLeasesCheck(db, schema, graceMs)));
    checks.push(await attempt("jobs-bloat", "warning", () => bloatCheck(db, schema)));
  }
  if (status.version >= HISTORY_VERSION) checks.push(...(await historyChecks(db, schema)));
  checks.push(await attempt("oldest-transaction", "warning", () => oldestTransactionCheck(db, longMs)));
  checks.push(await attempt("idle-in-transaction", "warning", () => idleInTransactionCheck(db, prefix, idleMs)));
  return freeze(checks);
}

function migrationsCheck(schema: string, status: SchemaStatus): DiagnosisCheck {
  const versions = `at migration ${status.version}, latest is ${status.latest}`;
  if (status.version < status.latest) return fail("migrations", "error", `schema ${schema} is ${versions} — run \`stint migrate\``);
  if (status.version > status.latest) {
    return fail("migrations", "warning", `schema ${schema} is ${versions}: it was migrated by a newer stint — upgrade this one`);
  }
  return pass("migrations", `schema ${schema} is ${versions}`);
}

async function indexesCheck(db: Kysely<any>, schema: string, version: number): Promise<DiagnosisCheck> {
  const found = new Map((await readIndexes(db, schema)).map((index) => [index.name, index]));
  // An optional index (the trigram ones, where pg_trgm could not be installed) counts only when it exists.
  const expected = EXPECTED_INDEXES.filter((index) => index.since <= version && (index.optional !== true || found.has(index.name)));
  const missing = expected.filter((index) => !found.has(index.name)).map((index) => `${index.table}.${index.name}`);
  const invalid = expected
    .filter((index) => found.get(index.name)?.valid === false || found.get(index.name)?.ready === false)
    .map((index) => `${index.table}.${index.name}`);
  if (missing.length === 0 && invalid.length === 0) return pass("indexes", `all ${expected.length} indexes exist and are valid`);
  const problems = [
    ...(missing.length === 0 ? [] : [`missing: ${missing.join(", ")}`]),
    ...(invalid.length === 0 ? [] : [`invalid (a failed concurrent build; drop and re-create it): ${invalid.join(", ")}`]),
  ];
  return fail("indexes", "error", `${problems.join("; ")} — queries fall back to scanning the table`);
}

async function triggerCheck(db: Kysely<any>, schema: string): Promise<DiagnosisCheck> {
  const state = await readWakeupTrigger(db, schema);
  if (state === "enabled") return pass("wakeup-trigger", "new due jobs wake listening workers (trigger jobs_notify_inserted)");
  return fail("wakeup-trigger", "warning", `trigger jobs_notify_inserted is ${state}: idle workers only find new jobs when they poll`);
}

async function stuckLeasesCheck(db: Kysely<any>, schema: string, graceMs: number): Promise<DiagnosisCheck> {
  const stuck = await readStuckLeases(db, schema, graceMs);
  if (stuck.count === 0) return pass("stuck-leases", `no running job's lease expired more than ${duration(graceMs)} ago`);
  const ids = `${stuck.sampleIds.join(", ")}${stuck.count > stuck.sampleIds.length ? ", …" : ""}`;
  return fail(
    "stuck-leases",
    "warning",
    `${stuck.count} running job(s) whose lease expired more than ${duration(graceMs)} ago ` +
      `(oldest ${duration(stuck.oldestExpiredMs ?? 0)} ago; ids ${ids}): ` +
      "nothing rescued them — is a process with the maintenance duties running?",
  );
}

async function bloatCheck(db: Kysely<any>, schema: string): Promise<DiagnosisCheck> {
  const health = await readTableHealth(db, schema);
  if (health === undefined) return pass("jobs-bloat", "no statistics for jobs yet");
  const { liveRows, deadRows } = health;
  const share = liveRows + deadRows === 0 ? 0 : deadRows / (liveRows + deadRows);
  const vacuumed = health.lastVacuumAgeMs === null ? "never vacuumed" : `last vacuumed ${duration(health.lastVacuumAgeMs)} ago`;
  const detail =
    `jobs has ${liveRows} live and ${deadRows} dead rows (${(share * 100).toFixed(1)}% dead), ` +
    `${(health.totalBytes / 1_048_576).toFixed(1)} MiB with indexes, ${vacuumed}`;
  if (deadRows > DEAD_ROW_FLOOR && deadRows > DEAD_ROW_RATIO * liveRows) {
    return fail("jobs-bloat", "warning", `${detail}: autovacuum is not keeping up — look for long transactions, or run VACUUM`);
  }
  return pass("jobs-bloat", detail);
}

/** `history`, `history-partitions` and `legacy-history`, from one read; three failed warnings when it cannot run. */
async function historyChecks(db: Kysely<any>, schema: string): Promise<DiagnosisCheck[]> {
  let history: HistoryState;
  try {
    history = await readHistory(db, schema);
  } catch (thrown) {
    const detail = `could not check: ${coerceError(interpretError(thrown, "history")).message}`;
    return ["history", "history-partitions", "legacy-history"].map((name) => fail(name, "warning", detail));
  }
  return [historyCheck(history), partitionsAheadCheck(history), legacyHistoryCheck(history)];
}

function historyCheck(history: HistoryState): DiagnosisCheck {
  const { partitions, oldest } = history;
  const days = oldest === null ? "no day partitions" : `${plural(partitions, "day partition")}, the oldest ${oldest.name} (${oldest.day})`;
  return pass(
    "history",
    `finished_jobs holds about ${plural(history.rowsEstimate, "row")}, ${(history.totalBytes / 1_048_576).toFixed(1)} MiB with indexes, in ${days}; ` +
      `finished_jobs_kept holds ${counted(history.keptRows, "row")}`,
  );
}

function partitionsAheadCheck(history: HistoryState): DiagnosisCheck {
  const { daysAhead, newestDay } = history;
  if (daysAhead !== null && daysAhead >= MIN_DAYS_AHEAD) {
    return pass("history-partitions", `day partitions are ready up to ${newestDay} (${plural(daysAhead, "day")} ahead)`);
  }
  const reach = daysAhead === null ? "there are no day partitions" : `day partitions reach only ${newestDay} (${plural(daysAhead, "day")} ahead)`;
  return fail(
    "history-partitions",
    "warning",
    `${reach}: jobs finishing on a day without one land in finished_jobs_kept, which retention prunes row by row — ` +
      "each retention pass of a worker's maintenance makes them a week ahead, and so does `stint prune`",
  );
}

function legacyHistoryCheck(history: HistoryState): DiagnosisCheck {
  if (history.legacyRows === 0) return pass("legacy-history", "no finished jobs left in jobs");
  return fail(
    "legacy-history",
    "warning",
    `${counted(history.legacyRows, "finished job")} ${history.legacyRows === 1 ? "is" : "are"} still in jobs, written before migration ${HISTORY_VERSION}: ` +
      "they keep the hot table as large as before — run `stint migrate` to move them into finished_jobs",
  );
}

/** A count that stopped at {@link HISTORY_COUNT_CAP}, said as such: `40 rows`, `at least 1000000 rows`. */
function counted(count: number, noun: string): string {
  return count >= HISTORY_COUNT_CAP ? `at least ${plural(count, noun)}` : plural(count, noun);
}

/** `1 row`, `2 rows`, `-1 days`. */
function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

async function oldestTransactionCheck(db: Kysely<any>, longMs: number): Promise<DiagnosisCheck> {
  const { oldest, oldPrepared } = await readOldestTransaction(db, longMs);
  const problems: string[] = [];
  if (oldest !== undefined && oldest.ageMs > longMs) {
    problems.push(
      `pid ${oldest.pid} (${oldest.applicationName || "no application_name"}, ${oldest.state ?? "state hidden"}) ` +
        `has had a transaction open for ${duration(oldest.ageMs)}`,
    );
  }
  if (oldPrepared > 0) problems.push(`${oldPrepared} prepared transaction(s) older than ${duration(longMs)}`);
  if (problems.length > 0) {
    return fail("oldest-transaction", "warning", `${problems.join("; ")}: vacuum cannot remove dead rows newer than it, in any table`);
  }
  const age = oldest === undefined ? "no other transaction is open" : `the oldest open transaction is ${duration(oldest.ageMs)} old`;
  return pass("oldest-transaction", age);
}

async function idleInTransactionCheck(db: Kysely<any>, prefix: string, idleMs: number): Promise<DiagnosisCheck> {
  const idle = await readIdleInTransaction(db, prefix, idleMs);
  if (idle.length === 0) return pass("idle-in-transaction", `no ${prefix} session is idle inside a transaction`);
  const sessions = idle.map((session) => `pid ${session.pid} (${session.applicationName}, ${duration(session.idleMs)})`);
  return fail(
    "idle-in-transaction",
    "warning",
    `${idle.length} ${prefix} session(s) idle inside a transaction: ${sessions.join(", ")} — they hold locks and vacuum back`,
  );
}

async function connectionCheck(target: ConnectionToDiagnose): Promise<DiagnosisCheck> {
  const { ok, detail } = await diagnoseConnection(target);
  return ok ? pass("connection", detail) : fail("connection", "warning", detail);
}

/** Runs a check; a check that cannot run is a failed one, with the reason. */
async function attempt(name: string, severity: DiagnosisSeverity, check: () => Promise<DiagnosisCheck>): Promise<DiagnosisCheck> {
  try {
    return await check();
  } catch (thrown) {
    return fail(name, severity, `could not check: ${coerceError(interpretError(thrown, name)).message}`);
  }
}

function pass(name: string, detail: string): DiagnosisCheck {
  return Object.freeze({ name, ok: true, severity: "info", detail });
}

function fail(name: string, severity: DiagnosisSeverity, detail: string): DiagnosisCheck {
  return Object.freeze({ name, ok: false, severity, detail });
}

function freeze(checks: readonly DiagnosisCheck[]): Diagnosis {
  return Object.freeze({ checks: Object.freeze([...checks]) });
}

/** `950 ms`, `42 s`, `12 min`, `3.5 h`. */
function duration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${Math.round(ms / 1_000)} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}
