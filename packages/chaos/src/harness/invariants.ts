import { sql, type Kysely } from "kysely";
import type { ChaosDatabase } from "./chaos-database";
import { figures } from "./jobs";

const TERMINAL = sql`('succeeded', 'dead', 'cancelled')`;

/** What the invariant checks found after a scenario. */
export interface InvariantReport {
  /** Jobs the scenario committed, and how many of them are missing from the table. */
  readonly expectedJobs: number;
  readonly missing: number;
  /** Jobs not in a terminal state after the final rescue pass (stuck, or never run). */
  readonly nonTerminal: number;
  /** Jobs with more than one row: in `jobs` and `finished_jobs` at once, or twice in either. */
  readonly rowsTwice: number;
  /** missing + nonTerminal. */
  readonly lost: number;
  /** Jobs with more than one accepted transition into a terminal state. */
  readonly duplicateTerminals: number;
  /** Accepted transitions out of a terminal state, and deletions (a row that left `jobs` without arriving in `finished_jobs`, or left that). */
  readonly leftTerminal: number;
  readonly attemptsDecreased: number;
  readonly attemptsOverMax: number;
  /** Handler runs of attempts claimed after their job's terminal transition. */
  readonly runsAfterFinish: number;
  /** Handler runs, jobs run at least once, and runs beyond the first per job. */
  readonly executions: number;
  readonly executedJobs: number;
  readonly reExecutions: number;
  /** Running jobs with an expired lease that the final rescue pass found (0 when workers finished cleanly). */
  readonly expiredAtEnd: number;
  /** Running jobs with an expired lease left after that rescue pass. */
  readonly expiredAfterRescue: number;
  /** Violations, one sentence each; empty when every invariant held. */
  readonly violations: readonly string[];
}

/**
 * Checks the invariants every scenario must keep, once its workers have
 * stopped: a final lease-rescue pass runs first, then
 *
 * - no job lost: every committed job is in `jobs` or `finished_jobs`
 *   (once) and terminal;
 * - at most one accepted terminal transition per job, none out of one;
 * - attempts never decrease and never exceed `max_attempts`;
 * - no attempt is claimed (and run) after its job finished;
 * - no running job with an expired lease is left behind.
 */
export async function checkInvariants(database: ChaosDatabase, expectedJobs: number): Promise<InvariantReport> {
  const { db, schema, store } = database;
  const jobs = sql.id(schema, "all_jobs");
  const transitions = sql.id(schema, "chaos_transitions");
  const executions = sql.id(schema, "chaos_executions");
  const before = await figures(
    db,
    sql<{ expired: number }>`
    SELECT count(*) AS expired FROM ${jobs} WHERE state = 'running' AND locked_until < now()`,
  );
  await store.rescueExpiredLeases({ limit: 1_000_000 });
  const table = await figures(
    db,
    sql<{ present: number; rows_twice: number; non_terminal: number; over_max: number; expired: number }>`
    SELECT count(DISTINCT id) AS present,
           count(*) - count(DISTINCT id) AS rows_twice,
           count(*) FILTER (WHERE state NOT IN ${TERMINAL}) AS non_terminal,
           count(*) FILTER (WHERE attempts > max_attempts) AS over_max,
           count(*) FILTER (WHERE state = 'running' AND locked_until < now()) AS expired
      FROM ${jobs}`,
  );
  const audit = await figures(
    db,
    sql<{ duplicate_terminals: number; left_terminal: number; decreased: number; over_max: number }>`
    SELECT (SELECT count(*) FROM (SELECT job_id FROM ${transitions}
                                   WHERE op = 'update' AND new_state IN ${TERMINAL} AND old_state NOT IN ${TERMINAL}
                                   GROUP BY job_id HAVING count(*) > 1) d) AS duplicate_terminals,
           count(*) FILTER (WHERE op = 'delete' OR deleted OR (op = 'update' AND old_state IN ${TERMINAL} AND new_state IS DISTINCT FROM old_state)) AS left_terminal,
           count(*) FILTER (WHERE new_attempts < old_attempts) AS decreased,
           count(*) FILTER (WHERE new_attempts > max_attempts) AS over_max
      FROM (SELECT t.*, t.op = 'leave' AND NOT EXISTS (SELECT 1 FROM ${transitions} a WHERE a.job_id = t.job_id AND a.xact = t.xact AND a.op = 'update' AND a.id > t.id) AS deleted
              FROM ${transitions} t) t`,
  );
  // A run of an attempt claimed after the job finished; a stale attempt that keeps running after losing its lease is not one.
  const runs = await figures(
    db,
    sql<{ executions: number; executed_jobs: number; after_finish: number }>`
    SELECT count(*) AS executions, count(DISTINCT e.job_id) AS executed_jobs,
           count(*) FILTER (WHERE e.attempt > f.final_attempt) AS after_finish
      FROM ${executions} e
      LEFT JOIN (SELECT DISTINCT ON (job_id) job_id, new_attempts AS final_attempt FROM ${transitions}
                  WHERE op = 'update' AND new_state IN ${TERMINAL} AND old_state NOT IN ${TERMINAL}
                  ORDER BY job_id, id) f ON f.job_id = e.job_id`,
  );
  const missing = Math.max(0, expectedJobs - table.present);
  const report = {
    expectedJobs,
    missing,
    nonTerminal: table.non_terminal,
    rowsTwice: table.rows_twice,
    lost: missing + table.non_terminal,
    duplicateTerminals: audit.duplicate_terminals,
    leftTerminal: audit.left_terminal,
    attemptsDecreased: audit.decreased,
    attemptsOverMax: audit.over_max + table.over_max,
    runsAfterFinish: runs.after_finish,
    executions: runs.executions,
    executedJobs: runs.executed_jobs,
    reExecutions: runs.executions - runs.executed_jobs,
    expiredAtEnd: before.expired,
    expiredAfterRescue: table.expired,
  };
  const violations: string[] = [];
  const expect = (ok: boolean, sentence: string): void => {
    if (!ok) violations.push(sentence);
  };
  expect(table.present === expectedJobs, `${table.present} jobs in the table, ${expectedJobs} committed`);
  expect(report.nonTerminal === 0, `${report.nonTerminal} jobs not terminal at the end`);
  expect(report.rowsTwice === 0, `${report.rowsTwice} jobs have a second row (in jobs and finished_jobs at once)`);
  expect(report.duplicateTerminals === 0, `${report.duplicateTerminals} jobs reached a terminal state more than once`);
  expect(report.leftTerminal === 0, `${report.leftTerminal} transitions out of a terminal state (or deletions)`);
  expect(report.attemptsDecreased === 0, `attempts decreased ${report.attemptsDecreased} times`);
  expect(report.attemptsOverMax === 0, `attempts exceeded max_attempts ${report.attemptsOverMax} times`);
  expect(report.runsAfterFinish === 0, `${report.runsAfterFinish} handler runs of attempts claimed after their job had finished`);
  expect(report.expiredAfterRescue === 0, `${report.expiredAfterRescue} running jobs with an expired lease after the rescue pass`);
  return Object.freeze({ ...report, violations: Object.freeze(violations) });
}

/**
 * stint backends (`application_name` `stint` or `stint:…`) of the current
 * database that sit `idle in transaction`: sampled twice, 250 ms apart, a
 * backend counts when it is in the same transaction both times. Check it
 * while the workers are alive and idle.
 */
export async function idleInTransaction(db: Kysely<any>): Promise<readonly string[]> {
  const sample = async (): Promise<Map<string, string>> => {
    const { rows } = await sql<{ pid: number; application_name: string; xact_start: Date | null }>`
      SELECT pid, application_name, xact_start FROM pg_stat_activity
       WHERE datname = current_database() AND state LIKE 'idle in transaction%'
         AND (application_name = 'stint' OR application_name LIKE 'stint:%')`.execute(db);
    return new Map(rows.map((row) => [`${row.pid}@${row.xact_start?.toISOString() ?? ""}`, row.application_name]));
  };
  const first = await sample();
  if (first.size === 0) return [];
  await new Promise((resolve) => setTimeout(resolve, 250));
  const second = await sample();
  return [...first.entries()].filter(([key]) => second.has(key)).map(([key, name]) => `${name} (${key})`);
}
