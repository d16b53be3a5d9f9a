import { join } from "node:path";
import { sql } from "kysely";
import { ChildNode } from "../harness/child-process";
import { checkInvariants, idleInTransaction } from "../harness/invariants";
import { figures, jobStates } from "../harness/jobs";
import { Verdict, type Scenario } from "../harness/scenario";
import { withChaosDatabase } from "../harness/scenario-run";
import { Supervisor } from "../harness/supervisor";
import type { ChaosProducerReport, ChaosProducerSettings } from "../worker/producer-process";

const PRODUCER_SCRIPT = join(__dirname, "..", "worker", "producer-process.js");

/**
 * 9. Producer processes race to enqueue the same dedupe keys, released
 * together on one signal, each in its own order — half one `enqueue` at a
 * time, half `enqueueMany` batches: exactly one job per key, every caller
 * got that job's id for the key, and no error surfaced.
 */
export const concurrentDedupe: Scenario = {
  id: 9,
  title: "producers racing on dedupe keys",
  claim: "16 processes enqueue the same 1,000 dedupe keys at once: exactly 1,000 jobs, every caller got the same id for a key, 0 errors surfaced",
  async run({ connectionString, profile, log }) {
    const p = profile.concurrentDedupe;
    return withChaosDatabase(connectionString, async (database) => {
      const producers = Array.from({ length: p.processes }, (_, index) => {
        const settings: ChaosProducerSettings = {
          keys: p.keys,
          batchSize: index % 2 === 0 ? 0 : 100,
          concurrency: index % 2 === 0 ? 4 : 2,
          seed: index + 1,
        };
        return new ChildNode(
          PRODUCER_SCRIPT,
          { DATABASE_URL: connectionString, STINT_SCHEMA: database.schema, CHAOS_PRODUCER: JSON.stringify(settings) },
          { stdin: true },
        );
      });
      const drainer = new Supervisor({
        connectionString,
        schema: database.schema,
        processes: 1,
        restart: false,
        settings: { mode: "once", concurrency: 16, leaseMs: 10_000 },
      });
      try {
        await Promise.all(producers.map((producer) => producer.event("ready", 60_000)));
        const go = Date.now();
        for (const producer of producers) producer.send("go");
        const reports = await Promise.all(producers.map(async (producer) => (await producer.event("done", 120_000)) as unknown as ChaosProducerReport));
        const idle = await idleInTransaction(database.db);
        const exits = await Promise.all(producers.map((producer) => producer.exited));
        log(`  ${p.processes} producers enqueued ${p.keys} keys each in ${Date.now() - go} ms`);
        const { rows } = await sql<{ key: string; id: string }>`
          SELECT dedupe_key AS key, id::text AS id FROM ${sql.id(database.schema, "all_jobs")}`.execute(database.db);
        const idOfKey = new Map(rows.map((row) => [row.key, row.id]));
        const errors = reports.flatMap((report) => report.errors);
        const inserted = reports.reduce((sum, report) => sum + report.inserted, 0);
        let mismatches = 0;
        for (const report of reports) {
          report.ids.forEach((id, key) => {
            if (idOfKey.get(`key-${key}`) !== id) mismatches += 1;
          });
        }
        const distinct = await figures(
          database.db,
          sql<{ keys: number }>`
          SELECT count(DISTINCT dedupe_key) AS keys FROM ${sql.id(database.schema, "all_jobs")}`,
        );
        await drainer.start();
        await drainer.all[0]!.node.exited;
        const invariants = await checkInvariants(database, p.keys);
        const states = await jobStates(database);

        const verdict = new Verdict();
        verdict.invariants(invariants, idle);
        verdict.check(
          exits.every((exit) => exit.code === 0),
          `producer exit codes ${exits.map((exit) => exit.code ?? exit.signal).join(", ")}`,
        );
        verdict.check(rows.length === p.keys && distinct.keys === p.keys, `${rows.length} jobs for ${distinct.keys} distinct keys, expected ${p.keys}`);
        verdict.check(inserted === p.keys, `${inserted} enqueue calls reported a new job, expected ${p.keys}`);
        verdict.check(mismatches === 0, `${mismatches} (producer, key) pairs got an id other than the key's job`);
        verdict.check(errors.length === 0, `${errors.length} errors surfaced, e.g. ${errors[0]}`);
        verdict.check(states["succeeded"] === p.keys, `states after draining ${JSON.stringify(states)}`);
        verdict.note(`${p.processes} producers × ${p.keys} keys → ${rows.length} jobs, ${mismatches} id mismatches, ${errors.length} errors`);
        return {
          jobs: rows.length,
          faults: `${p.processes} racing producers`,
          lost: invariants.lost,
          duplicates: invariants.duplicateTerminals + invariants.runsAfterFinish + Math.max(0, rows.length - p.keys),
          reExecutions: invariants.reExecutions,
          verdict,
        };
      } finally {
        for (const producer of producers) producer.kill("SIGKILL");
        await Promise.all(producers.map((producer) => producer.exited));
        await drainer.abort();
      }
    });
  },
};
