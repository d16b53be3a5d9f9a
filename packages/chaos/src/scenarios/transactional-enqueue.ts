import { JobClient } from "@stint/core";
import { createDatabase, PostgresJobStore } from "@stint/postgres-driver";
import { sql } from "kysely";
import { figures, jobStates, range, sleep } from "../harness/jobs";
import { Verdict, type Scenario } from "../harness/scenario";
import { drainWithFaults, settle, withChaosDatabase, withSupervisor } from "../harness/scenario-run";
import { ChaosJob } from "../worker/chaos-job";

type Fate = "commit" | "rollback" | "terminate";

/**
 * 10. Transactional enqueue under hungry workers: each producer
 * transaction writes an outbox marker and enqueues a job through
 * `JobClient.enqueue(…, { transaction })`, holds the transaction open a
 * while, then commits, rolls back, or has its connection terminated by
 * the server. Jobs of transactions that did not commit never exist and
 * never run; every handler run, the moment it starts, already sees its
 * transaction's marker (checked on the oracle's separate connection).
 */
export const transactionalEnqueue: Scenario = {
  id: 10,
  title: "transactional enqueue",
  claim: "jobs enqueued in transactions that roll back (or lose their connection) never run; no job starts before its enqueuing transaction commits",
  async run({ connectionString, profile, random, log }) {
    const p = profile.transactionalEnqueue;
    return withChaosDatabase(connectionString, async (database) => {
      const settings = { mode: "loop", concurrency: 8, leaseMs: 5_000, pollIntervalMs: 50 } as const;
      return withSupervisor(database, { processes: 2, settings, restart: false }, async (supervisor) => {
        const producer = createDatabase({ connectionString, maxConnections: p.producers, applicationName: "chaos:producer", onPoolError: () => undefined });
        const client = new JobClient(new PostgresJobStore({ db: producer.db, schema: database.schema }));
        const fates: Fate[] = range(p.transactions).map(() => {
          const draw = random();
          return draw < 0.5 ? "commit" : draw < 0.75 ? "rollback" : "terminate";
        });
        const holds = fates.map(() => Math.floor(random() * p.holdMs));
        const committed = new Set<number>();
        const outcomes = { commit: 0, rollback: 0, terminate: 0, unexpected: [] as string[] };
        try {
          let next = 0;
          const lane = async (): Promise<void> => {
            while (next < p.transactions) {
              const seq = next++;
              const fate = fates[seq]!;
              try {
                await producer.db.transaction().execute(async (trx) => {
                  await sql`INSERT INTO ${sql.id(database.schema, "chaos_outbox")} (seq) VALUES (${seq})`.execute(trx);
                  await client.enqueue(ChaosJob, { seq, action: "sleep", ms: 0 }, { transaction: trx });
                  await sleep(holds[seq]!);
                  if (fate === "rollback") throw new Error("rolled back on purpose");
                  if (fate === "terminate") {
                    const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(trx);
                    await sql`SELECT pg_terminate_backend(${rows[0]!.pid}::integer)`.execute(database.db);
                    await sql`SELECT 1`.execute(trx);
                  }
                });
                committed.add(seq);
                outcomes.commit += 1;
                if (fate !== "commit") outcomes.unexpected.push(`transaction ${seq} (${fate}) committed`);
              } catch (thrown) {
                if (fate === "commit") outcomes.unexpected.push(`transaction ${seq} failed: ${String(thrown)}`);
                else outcomes[fate] += 1;
              }
            }
          };
          await Promise.all(range(p.producers).map(lane));
        } finally {
          await producer.close();
        }
        log(`  ${outcomes.commit} committed, ${outcomes.rollback} rolled back, ${outcomes.terminate} cut off by pg_terminate_backend`);
        const drained = await drainWithFaults(database, { timeoutMs: 60_000, tickMs: 100 });
        const run = await settle(database, supervisor, committed.size);
        const { invariants } = run;
        const { rows } = await sql<{ seq: number }>`
          SELECT (payload->>'seq')::int AS seq FROM ${sql.id(database.schema, "all_jobs")}`.execute(database.db);
        const phantom = rows.filter((row) => !committed.has(row.seq)).length;
        const runs = await figures(
          database.db,
          sql<{ early: number; phantom_runs: number }>`
          SELECT count(*) FILTER (WHERE NOT marker_visible) AS early,
                 count(*) FILTER (WHERE NOT (seq = ANY(${[...committed]}::int[]))) AS phantom_runs
            FROM ${sql.id(database.schema, "chaos_executions")}`,
        );
        const states = await jobStates(database);

        const verdict = new Verdict();
        verdict.invariants(invariants, run.idleInTransaction);
        verdict.check(drained, "the committed jobs did not all run");
        verdict.check(outcomes.unexpected.length === 0, outcomes.unexpected.slice(0, 3).join("; "));
        verdict.check(phantom === 0, `${phantom} jobs exist from transactions that did not commit`);
        verdict.check(runs.phantom_runs === 0, `${runs.phantom_runs} handler runs of jobs whose transaction did not commit`);
        verdict.check(runs.early === 0, `${runs.early} handler runs started before their transaction's marker was visible`);
        verdict.check(states["succeeded"] === committed.size, `succeeded ${states["succeeded"] ?? 0} of ${committed.size} committed`);
        verdict.note(
          `${committed.size} committed, ${outcomes.rollback} rolled back, ${outcomes.terminate} cut off: ${phantom} phantom jobs, ${runs.early} early starts`,
        );
        return {
          jobs: committed.size,
          faults: `${outcomes.rollback} rollbacks, ${outcomes.terminate} cut off`,
          lost: invariants.lost,
          duplicates: invariants.duplicateTerminals + invariants.runsAfterFinish,
          reExecutions: invariants.reExecutions,
          verdict,
        };
      });
    });
  },
};
