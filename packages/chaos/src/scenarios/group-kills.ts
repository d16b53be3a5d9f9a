import { sql } from "kysely";
import { buildNewJob } from "@stint/core/driver";
import { figures, enqueueRaw, jobStates, range } from "../harness/jobs";
import { sampleGroups } from "../harness/group-sampler";
import { Verdict, type Scenario } from "../harness/scenario";
import { drainWithFaults, KillInjector, settle, withChaosDatabase, withSupervisor } from "../harness/scenario-run";
import { ChaosJob } from "../worker/chaos-job";

/**
 * 17. kill -9 of worker processes on a queue of groups and serial lines:
 * sampled every 10 ms, no group ever runs more than its cap and no line
 * more than one job; every line's jobs run in enqueue order, each starting
 * after the run that completed the one before it ended; every job succeeds.
 * Claims wait for their flush (see `ChaosWorkerSettings.durableClaims`), so
 * every re-execution is one the kills caused.
 */
export const groupKills: Scenario = {
  id: 17,
  title: "kill -9 with groups and serial lines",
  claim:
    "SIGKILL of random worker processes on a queue of capped groups and serial lines: 0 lost, no group above maxRunningPerGroup and no line above one running job in any 10 ms sample, each line run in enqueue order, re-executions ≤ jobs in flight at the kills",
  async run({ connectionString, profile, random, log }) {
    const p = profile.groupKills;
    return withChaosDatabase(connectionString, async (database) => {
      // A running cap far above the slots: claims of the queue take turns on its row (as under any queue control), which
      // widens the time between a claim's snapshot and its turns, where a line's order was once lost.
      await database.store.setQueueControls(ChaosJob.name, { maxRunningPerGroup: p.maxRunningPerGroup, maxRunning: 1_000 });
      const grouped = p.groups * p.perGroup;
      const lined = p.lines * p.perLine;
      const total = grouped + lined;
      // Groups and lines interleaved in enqueue order, as producers write them.
      const jobs = range(Math.max(grouped, lined)).flatMap((n) => [
        ...(n < grouped ? [{ group: `tenant-${n % p.groups}` }] : []),
        ...(n < lined ? [{ serialKey: `account-${n % p.lines}` }] : []),
      ]);
      await enqueueRaw(
        database,
        jobs.map((options, seq) => buildNewJob(ChaosJob, { seq, action: "sleep-timed", ms: p.handlerMs }, options)),
      );
      const settings = {
        mode: "loop",
        concurrency: p.concurrency,
        leaseMs: p.leaseMs,
        pollIntervalMs: 200,
        shutdownTimeoutMs: 5_000,
        durableClaims: true,
      } as const;
      return withSupervisor(database, { processes: p.processes, settings }, async (supervisor) => {
        const sampler = sampleGroups(database, ChaosJob.name, 10);
        const killer = new KillInjector(database, supervisor, random, p.kills);
        const drained = await drainWithFaults(database, { timeoutMs: 240_000, tickMs: p.killEveryMs, inject: () => killer.tick() });
        const seen = await sampler.stop();
        log(`  ${killer.kills} kills, ${supervisor.restarts} restarts, drained: ${drained}`);
        const run = await settle(database, supervisor, total);
        const { invariants } = run;
        const states = await jobStates(database);
        const executions = sql.id(database.schema, "chaos_executions");
        // In each line, every run of a job (any attempt) starts after the run that completed the job before it ended.
        const order = await figures(
          database.db,
          sql<{ pairs: number; broken: number; uncounted: number }>`
          WITH line AS (SELECT id, group_key, attempts, row_number() OVER (PARTITION BY group_key ORDER BY id) AS n
                          FROM ${sql.id(database.schema, "all_jobs")} WHERE serial IS NOT NULL),
               counted AS (SELECT line.group_key, line.n, e.ended_at FROM line JOIN ${executions} AS e
                             ON e.job_id = line.id AND e.attempt = line.attempts AND e.ended_how = 'done'),
               first AS (SELECT line.group_key, line.n, min(e.started_at) AS started_at FROM line JOIN ${executions} AS e ON e.job_id = line.id GROUP BY 1, 2)
          SELECT count(*) AS pairs, count(*) FILTER (WHERE first.started_at <= counted.ended_at) AS broken,
                 ${lined} - (SELECT count(*) FROM counted) AS uncounted
            FROM first JOIN counted ON counted.group_key = first.group_key AND counted.n = first.n - 1`,
        );

        const verdict = new Verdict();
        verdict.invariants(invariants, run.idleInTransaction);
        verdict.check(drained, "the queue did not drain within 4 minutes");
        verdict.check(killer.kills >= p.kills, `only ${killer.kills} kills happened before the queue drained (wanted ${p.kills})`);
        verdict.check(states["succeeded"] === total, `succeeded ${states["succeeded"] ?? 0} of ${total} (${JSON.stringify(states)})`);
        verdict.check(
          invariants.reExecutions <= killer.inFlightAtKills,
          `${invariants.reExecutions} re-executions, more than the ${killer.inFlightAtKills} jobs in flight at the kills`,
        );
        verdict.check(seen.mostInGroup <= p.maxRunningPerGroup, `a group had ${seen.mostInGroup} jobs running at once (cap ${p.maxRunningPerGroup})`);
        verdict.check(seen.mostInGroup === p.maxRunningPerGroup, `no sample saw a group at its cap (most ${seen.mostInGroup}): the cap was not tested`);
        verdict.check(seen.mostInLine === 1, `a line had ${seen.mostInLine} jobs running at once (one at most, and one seen)`);
        verdict.check(order.uncounted === 0, `${order.uncounted} line jobs have no completed run of their last attempt`);
        verdict.check(
          order.pairs === lined - p.lines && order.broken === 0,
          `${order.broken} of ${order.pairs} line jobs started before the job ahead of them had finished`,
        );
        verdict.note(
          `${killer.kills} SIGKILLs, ${supervisor.restarts} restarts; re-executions ${invariants.reExecutions} ≤ ${killer.inFlightAtKills} in flight at the kills`,
        );
        verdict.note(
          `${seen.samples} samples (${seen.failed} failed): most running in a group ${seen.mostInGroup} (cap ${p.maxRunningPerGroup}), in a line ${seen.mostInLine}`,
        );
        verdict.note(`${p.lines} lines: ${order.pairs} successors, ${order.broken} started early`);
        return {
          jobs: total,
          faults: `${killer.kills} × SIGKILL`,
          lost: invariants.lost,
          duplicates: invariants.duplicateTerminals + invariants.runsAfterFinish,
          reExecutions: invariants.reExecutions,
          verdict,
        };
      });
    });
  },
};
