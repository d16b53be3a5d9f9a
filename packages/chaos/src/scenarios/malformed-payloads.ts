import { ErrorCode } from "@stint/core";
import { buildNewJob, type NewJob } from "@stint/core/driver";
import { sql } from "kysely";
import { enqueueRaw, jobStates } from "../harness/jobs";
import { Verdict, type Scenario } from "../harness/scenario";
import { drainWithFaults, settle, withChaosDatabase, withSupervisor } from "../harness/scenario-run";
import { ChaosJob } from "../worker/chaos-job";

/** Broken payloads, each with the field its error must name. */
const DEFECTS: readonly { readonly field: string; readonly payload: (seq: number) => unknown }[] = [
  { field: "seq", payload: () => ({ action: "sleep", ms: 0 }) },
  { field: "seq", payload: (seq) => ({ seq: String(seq), action: "sleep", ms: 0 }) },
  { field: "seq", payload: () => ({ seq: -1, action: "sleep", ms: 0 }) },
  { field: "action", payload: (seq) => ({ seq, action: "dance", ms: 0 }) },
  { field: "action", payload: (seq) => ({ seq, ms: 0 }) },
  { field: "ms", payload: (seq) => ({ seq, action: "sleep", ms: "10" }) },
  { field: "firstMs", payload: (seq) => ({ seq, action: "sleep", ms: 0, firstMs: 1e9 }) },
  { field: "colour", payload: (seq) => ({ seq, action: "sleep", ms: 0, colour: "red" }) },
  { field: "payload", payload: (seq) => [seq] },
  { field: "payload", payload: () => "not an object" },
];

/**
 * 8. Malformed payloads spread among valid ones: each is dead after its
 * one claim, its handler never runs, and its `last_error` names the field
 * that failed; the valid jobs all succeed.
 */
export const malformedPayloads: Scenario = {
  id: 8,
  title: "malformed payloads",
  claim: "malformed payloads among valid ones: each dead after one claim, handler never invoked, last_error names the failing field",
  async run({ connectionString, profile }) {
    const p = profile.malformedPayloads;
    return withChaosDatabase(connectionString, async (database) => {
      const every = Math.floor(p.jobs / p.malformed);
      const expectedField = new Map<number, string>();
      const rows: NewJob[] = [];
      for (let seq = 0; seq < p.jobs; seq += 1) {
        const broken = seq % every === every - 1 && expectedField.size < p.malformed;
        if (!broken) {
          rows.push(buildNewJob(ChaosJob, { seq, action: "sleep", ms: 0 }, { maxAttempts: 5 }));
          continue;
        }
        const defect = DEFECTS[expectedField.size % DEFECTS.length]!;
        expectedField.set(rows.length, defect.field);
        rows.push({ ...buildNewJob(ChaosJob, { seq, action: "sleep", ms: 0 }, { maxAttempts: 5 }), payloadJson: JSON.stringify(defect.payload(seq)) });
      }
      const ids = await enqueueRaw(database, rows);
      const settings = { mode: "loop", concurrency: 8, leaseMs: 5_000, pollIntervalMs: 100 } as const;
      return withSupervisor(database, { processes: 2, settings, restart: false }, async (supervisor) => {
        const drained = await drainWithFaults(database, { timeoutMs: 60_000, tickMs: 100 });
        const run = await settle(database, supervisor, p.jobs);
        const { invariants } = run;
        const malformedIds = [...expectedField.keys()].map((index) => ids[index]!);
        const { rows: dead } = await sql<{ id: string; state: string; attempts: number; error_code: string | null; last_error: string | null; runs: number }>`
          SELECT j.id::text AS id, j.state, j.attempts, j.error_code, j.last_error,
                 (SELECT count(*)::int FROM ${sql.id(database.schema, "chaos_executions")} e WHERE e.job_id = j.id) AS runs
            FROM ${sql.id(database.schema, "all_jobs")} j WHERE j.id = ANY(${malformedIds}::bigint[])`.execute(database.db);
        const fieldOf = new Map([...expectedField.entries()].map(([index, field]) => [ids[index]!, field]));
        const wrong = dead.filter(
          (job) =>
            job.state !== "dead" ||
            job.attempts !== 1 ||
            job.error_code !== ErrorCode.Parse ||
            job.runs !== 0 ||
            !(job.last_error ?? "").includes(`${fieldOf.get(job.id)} `),
        );
        const states = await jobStates(database);

        const verdict = new Verdict();
        verdict.invariants(invariants, run.idleInTransaction);
        verdict.check(drained, "the queue did not drain");
        verdict.check(dead.length === p.malformed, `${dead.length} malformed jobs found, ${p.malformed} enqueued`);
        verdict.check(wrong.length === 0, `${wrong.length} malformed jobs not dead after one claim with the field named, e.g. ${JSON.stringify(wrong[0])}`);
        verdict.check(states["succeeded"] === p.jobs - p.malformed, `states ${JSON.stringify(states)}`);
        verdict.check(invariants.executedJobs === p.jobs - p.malformed, `${invariants.executedJobs} jobs reached their handler`);
        verdict.note(
          `${p.malformed - wrong.length}/${p.malformed} dead after 1 claim, handler never run, field named (${[...new Set(DEFECTS.map((d) => d.field))].join(", ")})`,
        );
        verdict.note(`${states["succeeded"] ?? 0}/${p.jobs - p.malformed} valid jobs succeeded`);
        return {
          jobs: p.jobs,
          faults: `${p.malformed} malformed payloads`,
          lost: invariants.lost,
          duplicates: invariants.duplicateTerminals + invariants.runsAfterFinish,
          reExecutions: invariants.reExecutions,
          verdict,
        };
      });
    });
  },
};
