import { sql } from "kysely";
import { JobClient, step, type WorkflowStep } from "@stint/core";
import { figures, jobStates } from "../harness/jobs";
import { Verdict, type Scenario } from "../harness/scenario";
import { drainWithFaults, KillInjector, settle, withChaosDatabase, withSupervisor } from "../harness/scenario-run";
import { ChaosJob, type ChaosTask } from "../worker/chaos-job";

/** One step of the workflow's shape: its name and the names it waits for. */
export interface ShapedStep {
  readonly name: string;
  readonly after: readonly string[];
}

/**
 * The 1,000 steps of scenario 18, in 10 layers: a root; a fan-out of 111;
 * 111 chains; 111 steps each waiting for its chain and 1 or 2 others drawn
 * at random; a fan-in; a fan-out of 222; 222 chains; 110 steps each
 * waiting for two chains and a random step two layers up; 110 chains; and
 * the final step, a fan-in of those 110. `random` draws the extra edges.
 *
 * @example
 * ```ts
 * const shape = workflowShape(seededRandom(18));
 * shape.length; // 1000
 * ```
 */
export function workflowShape(random: () => number): readonly ShapedStep[] {
  const steps: ShapedStep[] = [];
  const layer = (index: number, size: number, after: (i: number) => string[]): string[] => {
    const names = Array.from({ length: size }, (_, i) => `l${index}.${i}`);
    names.forEach((name, i) => steps.push({ name, after: [...new Set(after(i))] }));
    return names;
  };
  const pick = (names: readonly string[]) => names[Math.floor(random() * names.length)]!;
  const root = layer(0, 1, () => []);
  const spread = layer(1, 111, () => root);
  const chained = layer(2, 111, (i) => [spread[i]!]);
  const meshed = layer(3, 111, (i) => [chained[i]!, pick(chained), ...(random() < 0.5 ? [pick(chained)] : [])]);
  const joined = layer(4, 1, () => meshed);
  const wide = layer(5, 222, () => joined);
  const wideChained = layer(6, 222, (i) => [wide[i]!]);
  const paired = layer(7, 110, (i) => [wideChained[2 * i]!, wideChained[2 * i + 1]!, pick(wide)]);
  const pairedChained = layer(8, 110, (i) => [paired[i]!]);
  layer(9, 1, () => pairedChained);
  return steps;
}

/**
 * 18. kill -9 of worker processes while they run a 1,000-step workflow
 * whose every step makes its effect through `ctx.once`: every step's
 * effect is applied once, every run of a step starts after each step it
 * waits for succeeded, nothing is left blocked, and the workflow ends
 * succeeded.
 */
export const workflowKills: Scenario = {
  id: 18,
  title: "kill -9 under a 1,000-step workflow",
  claim:
    "SIGKILL of random worker processes while they run a 1,000-step workflow (fan-outs, fan-ins, chains; 10 layers) whose steps make their effects through ctx.once: 0 lost, one ledger entry and one effect per step, no run of a step before all it waits for succeeded, none left blocked, the workflow succeeded, every re-execution after a lost attempt",
  async run({ connectionString, profile, random, log }) {
    const p = profile.workflowKills;
    return withChaosDatabase(connectionString, async (database) => {
      const shape = workflowShape(random);
      const task = (seq: number): ChaosTask => ({ seq, action: "effect", ms: p.handlerMs });
      const steps: Record<string, WorkflowStep<ChaosTask>> = Object.fromEntries(
        shape.map(({ name, after }, seq) => [name, step(ChaosJob, task(seq), { after: [...after], maxAttempts: 10 })]),
      );
      const workflow = await new JobClient(database.store).enqueueWorkflow("chaos-workflow", steps);
      const total = shape.length;
      const settings = { mode: "loop", concurrency: p.concurrency, leaseMs: p.leaseMs, pollIntervalMs: 200, shutdownTimeoutMs: 5_000 } as const;
      return withSupervisor(database, { processes: p.processes, settings }, async (supervisor) => {
        const killer = new KillInjector(database, supervisor, random, p.kills);
        const runStarted = Date.now();
        const drained = await drainWithFaults(database, { timeoutMs: 240_000, tickMs: p.killEveryMs, inject: () => killer.tick() });
        const runMs = Date.now() - runStarted;
        log(`  ${killer.kills} kills, ${supervisor.restarts} restarts, drained: ${drained}`);
        const run = await settle(database, supervisor, total);
        const { invariants } = run;
        const states = await jobStates(database);
        const stored = await database.store.getWorkflow({ id: workflow.id });
        const table = (name: string) => sql.id(database.schema, name);
        const seqs = shape.map((_, seq) => seq);
        const jobIds = seqs.map((seq) => stored?.steps[seq]?.jobId ?? "0");
        // One ledger entry per step, written by that step's job, and one effect row per step.
        const effects = await figures(
          database.db,
          sql<{ rows: number; keys: number; ledger: number; ledger_keys: number; ledger_own: number; body_runs: number }>`
          WITH step AS (SELECT * FROM unnest(${seqs}::int[], ${jobIds}::bigint[]) AS step(seq, job_id))
          SELECT (SELECT count(*) FROM ${table("chaos_effects")}) AS rows,
                 (SELECT count(DISTINCT seq) FROM ${table("chaos_effects")}) AS keys,
                 (SELECT count(*) FROM ${table("effects")} WHERE key LIKE 'chaos-effect:%') AS ledger,
                 (SELECT count(DISTINCT key) FROM ${table("effects")} WHERE key LIKE 'chaos-effect:%') AS ledger_keys,
                 (SELECT count(*) FROM step JOIN ${table("effects")} AS l ON l.key = 'chaos-effect:' || step.seq AND l.job_id = step.job_id) AS ledger_own,
                 (SELECT count(*) FROM ${table("chaos_effect_runs")}) AS body_runs`,
        );
        // Every run of every step (any attempt, from the oracle) against the success of each step it waits for (its
        // finished_at: the start of the transaction that recorded the success, which the run could only be claimed after).
        const dependents = (stored?.steps ?? []).flatMap((entry) => entry.after.map(() => entry.jobId));
        const dependencies = (stored?.steps ?? []).flatMap((entry) => entry.after);
        const finalId = stored?.steps.at(-1)?.jobId ?? "0";
        const order = await figures(
          database.db,
          sql<{ edges: number; checked: number; early: number; unfinished: number; final_runs: number; final_early: number }>`
          WITH edge AS (SELECT * FROM unnest(${dependents}::bigint[], ${dependencies}::bigint[]) AS edge(job_id, needs_id)),
               checked AS (SELECT edge.job_id, e.started_at, dep.state AS dep_state, dep.finished_at AS dep_finished_at
                             FROM edge JOIN ${table("chaos_executions")} AS e ON e.job_id = edge.job_id
                             JOIN ${table("all_jobs")} AS dep ON dep.id = edge.needs_id)
          SELECT (SELECT count(*) FROM edge) AS edges, count(*) AS checked,
                 count(*) FILTER (WHERE started_at <= dep_finished_at) AS early,
                 count(*) FILTER (WHERE dep_state <> 'succeeded' OR dep_finished_at IS NULL) AS unfinished,
                 (SELECT count(*) FROM ${table("chaos_executions")} WHERE job_id = ${finalId}::bigint) AS final_runs,
                 count(*) FILTER (WHERE job_id = ${finalId}::bigint AND started_at <= dep_finished_at) AS final_early
            FROM checked`,
        );
        // Every handler run beyond a step's first follows an attempt of it that was lost: its worker killed (the lease
        // ran out) or its heartbeat not answered in time (a loaded machine). A handler that fails, or a step claimed
        // twice, shows here as an unexplained run.
        const reruns = await figures(
          database.db,
          sql<{ unexplained: number; lost_attempts: number; lost_to_heartbeats: number }>`
          WITH runs AS (SELECT job_id, count(*) AS n FROM ${table("chaos_executions")} GROUP BY job_id),
               lost AS (SELECT job_id, count(*) AS n, count(*) FILTER (WHERE error_code = 'STINT_LEASE_LOST') AS heartbeats
                          FROM ${table("job_attempts")} WHERE outcome = 'lease-lost' GROUP BY job_id)
          SELECT coalesce(sum(greatest(runs.n - 1 - coalesce(lost.n, 0), 0)), 0) AS unexplained,
                 (SELECT coalesce(sum(n), 0) FROM lost) AS lost_attempts, (SELECT coalesce(sum(heartbeats), 0) FROM lost) AS lost_to_heartbeats
            FROM runs LEFT JOIN lost ON lost.job_id = runs.job_id`,
        );
        const blocked = await figures(database.db, sql<{ blocked: number }>`SELECT count(*) AS blocked FROM ${table("all_jobs")} WHERE state = 'blocked'`);

        const verdict = new Verdict();
        verdict.invariants(invariants, run.idleInTransaction);
        verdict.check(drained, "the workflow did not drain within 4 minutes");
        verdict.check(killer.kills >= p.kills, `only ${killer.kills} kills happened before the workflow drained (wanted ${p.kills})`);
        verdict.check(states["succeeded"] === total, `succeeded ${states["succeeded"] ?? 0} of ${total} steps (${JSON.stringify(states)})`);
        verdict.check(blocked.blocked === 0 && (stored?.counts.blocked ?? 0) === 0, `${blocked.blocked} steps left blocked`);
        verdict.check(stored?.state === "succeeded", `the workflow's state is ${stored?.state ?? "unknown"}, not succeeded`);
        verdict.check(stored?.steps.length === total, `the workflow has ${stored?.steps.length ?? 0} steps, not ${total}`);
        verdict.check(reruns.unexplained === 0, `${reruns.unexplained} handler runs follow no lost attempt of their step`);
        verdict.check(effects.rows === total && effects.keys === total, `effects applied ${effects.rows} times for ${effects.keys} of ${total} steps`);
        verdict.check(
          effects.ledger === total && effects.ledger_keys === total && effects.ledger_own === total,
          `ledger entries ${effects.ledger} for ${effects.ledger_keys} keys, ${effects.ledger_own} written by their own step, of ${total}`,
        );
        verdict.check(order.edges === dependents.length && order.edges > 0, `${order.edges} dependencies checked of ${dependents.length}`);
        verdict.check(order.early === 0, `${order.early} of ${order.checked} runs started before a step they wait for had succeeded`);
        verdict.check(order.unfinished === 0, `${order.unfinished} runs wait for a step that did not succeed`);
        verdict.check(
          order.final_runs >= 1 && order.final_early === 0,
          `the final step ran ${order.final_runs} times, ${order.final_early} before a step it waits for`,
        );
        verdict.note(
          `${killer.kills} SIGKILLs over the first ${(killer.lastKillAfterMs / 1_000).toFixed(1)} s of a ${(runMs / 1_000).toFixed(1)} s run, ${supervisor.restarts} restarts`,
        );
        verdict.note(
          `re-executions ${invariants.reExecutions}, each after a lost attempt: ${reruns.lost_attempts} lost (${killer.inFlightAtKills} in flight at the kills, ${reruns.lost_to_heartbeats} to unanswered heartbeats)`,
        );
        verdict.note(
          `${order.edges} dependencies, ${order.checked} (run, dependency) pairs: ${order.early} early; final step: ${order.final_runs} run(s) after its ${stored?.steps.at(-1)?.after.length ?? 0} dependencies`,
        );
        verdict.note(
          `effects ${effects.rows}/${total}, ledger entries ${effects.ledger}/${total} (bodies run ${effects.body_runs}: ${effects.body_runs - effects.keys} rolled back by kills)`,
        );
        verdict.note(`workflow ${stored?.state ?? "missing"}, ${blocked.blocked} blocked`);
        return {
          jobs: total,
          faults: `${killer.kills} × SIGKILL`,
          lost: invariants.lost,
          duplicates: invariants.duplicateTerminals + invariants.runsAfterFinish + (effects.rows - effects.keys) + (effects.ledger - effects.ledger_keys),
          reExecutions: invariants.reExecutions,
          verdict,
        };
      });
    });
  },
};
