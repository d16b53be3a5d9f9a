import { ExitCode } from "@stint/core";
import { planQueuesRetention, planRetention } from "@stint/core/internal";
import { assertQueueName, MAX_BATCH_SIZE, MAX_EXPIRE_BATCH } from "@stint/core/driver";
import { countClosedWindows, ensureHistoryPartitions, previewRetention } from "@stint/postgres-driver";
import { decimalValue, integerValue } from "../args/option-values";
import { PRUNE_DEFAULT_DAYS, STATE_DAYS_OPTIONS, stateDaysOptions } from "../args/state-days-options";
import { flagOption, stringOption, type Command } from "../command";
import { startProgress } from "../output/progress";
import { formatCount, formatTable } from "../output/table";
import { printPrunePreview } from "./prune-preview";

type FinishedState = "succeeded" | "dead" | "cancelled";

const DAY_MS = 86_400_000;

/**
 * `stint prune`: deletes finished jobs older than a retention per state —
 * whole day partitions of the history where it can, a batch per statement
 * (skipping rows others hold locked) elsewhere — until a batch comes back
 * short, and prints how many it deleted; then old keys of the effects
 * ledger and closed unique windows (those of `--queue`, when given), so a
 * deployment without a loop-mode leader keeps both tables small. Like a
 * retention pass of the maintenance loop, it first makes the history's day
 * partitions a week ahead. With `--dry-run`, it only reads, and says what
 * would go.
 */
export const pruneCommand: Command = {
  name: "prune",
  summary: "Delete finished jobs older than the retention of their state",
  usage: ["prune [--succeeded-days 7] [--dead-days 30] [--cancelled-days 30] [--effects-days 30] [--batch 1000] [--queue Q,…] [--dry-run] [--json]"],
  args: { min: 0, max: 0 },
  json: true,
  options: {
    ...stateDaysOptions("DAYS", (state) => `delete ${state} jobs finished more than DAYS ago (default ${PRUNE_DEFAULT_DAYS[state]})`),
    "effects-days": { type: "string", value: "DAYS", description: "delete ctx.once ledger entries older than DAYS (default 30; not with --queue)" },
    batch: { type: "string", value: "N", description: "rows per DELETE statement, 1 to 100000 (default 1000)" },
    queue: { type: "string", value: "Q,…", description: "only jobs of these queues (default: every queue)" },
    "dry-run": { type: "boolean", description: "delete nothing: say what would go, per state, and which partitions would be dropped whole" },
  },
  notes: [
    "Days may have a fraction: --succeeded-days 0.5 keeps twelve hours.",
    "Finished jobs are kept in one partition per UTC day. With a retention of a day or more and no --queue, a day's",
    "partition is dropped whole once all of that day is past the retention (so a job stays at most a day longer), and",
    "its jobs of states kept longer move to finished_jobs_kept; that partition and jobs finished before the upgrade",
    "are pruned row by row. A shorter retention, or --queue, deletes every job past it, row by row.",
    "Keep ledger entries longer than any job that could repeat their key may live.",
    "A queue with a retention of its own (see `stint retention`) keeps its jobs by it, whatever the days given here;",
    "its jobs kept longer move to finished_jobs_kept when their day is dropped.",
    "It also deletes the unique windows that have closed (of the --queue queues, when given); a loop-mode leader",
    "and each `stint run --once` (for its queues) do too.",
  ],
  async run(context) {
    const retention: [FinishedState, number][] = STATE_DAYS_OPTIONS.map(([state, option]) => [
      state,
      decimalValue(`--${option}`, stringOption(context, option) ?? String(PRUNE_DEFAULT_DAYS[state]), 36_500),
    ]);
    const effectsDays = decimalValue("--effects-days", stringOption(context, "effects-days") ?? "30", 36_500);
    const batch = integerValue("--batch", stringOption(context, "batch") ?? "1000", 1, MAX_BATCH_SIZE);
    const queueText = stringOption(context, "queue");
    const queues = queueText?.split(",").map((queue) => assertQueueName(queue.trim()));
    const { store, db, schema } = await context.connect();
    const global = Object.fromEntries(retention.map(([state, days]) => [state, Math.round(days * DAY_MS)])) as Record<FinishedState, number>;
    const controls = await store.listQueueControls();
    // Each queue's own retention (`stint retention`) wins over the days given here, as in the maintenance pass.
    const steps =
      queues === undefined ? retention.flatMap(([state]) => planRetention(global, controls, [state])) : planQueuesRetention(global, controls, queues);
    if (flagOption(context, "dry-run")) {
      const passes = steps;
      const effectsOlderThanMs = queues === undefined ? Math.round(effectsDays * DAY_MS) : undefined;
      const preview = await previewRetention(db, schema, { passes, effectsOlderThanMs });
      return printPrunePreview(context, preview, { retention, effectsDays }, await countClosedWindows(db, schema, queues === undefined ? {} : { queues }));
    }
    await ensureHistoryPartitions(db, schema);
    const deleted: Record<FinishedState, number> = { succeeded: 0, dead: 0, cancelled: 0 };
    const progress = startProgress(context.io.stderr, { label: "prune", unit: "jobs deleted" });
    let interrupted = false;
    let effects = 0;
    let windows = 0;
    try {
      for (const step of steps) {
        for (;;) {
          if (context.signal.aborted) {
            interrupted = true;
            break;
          }
          const count = await store.deleteFinishedBefore({ ...step, limit: batch });
          deleted[step.states[0]!] += count;
          progress.update(deleted.succeeded + deleted.dead + deleted.cancelled);
          if (count < batch) break;
        }
        if (interrupted) break;
      }
      // The ledger is not per queue: a pruning limited to some queues leaves it alone.
      while (queues === undefined && !interrupted) {
        if (context.signal.aborted) {
          interrupted = true;
          break;
        }
        const count = await store.deleteEffectsBefore({ olderThanMs: Math.round(effectsDays * DAY_MS), limit: batch });
        effects += count;
        if (count < batch) break;
      }
      const windowBatch = Math.min(batch, MAX_EXPIRE_BATCH);
      while (!interrupted) {
        if (context.signal.aborted) {
          interrupted = true;
          break;
        }
        const count = await store.deleteClosedWindows({ ...(queues === undefined ? {} : { queues }), limit: windowBatch });
        windows += count;
        if (count < windowBatch) break;
      }
    } finally {
      progress.stop();
    }
    const total = deleted.succeeded + deleted.dead + deleted.cancelled;
    if (context.json) {
      context.out.json({ deleted, total, effects, windows, interrupted, retentionDays: { ...Object.fromEntries(retention), effects: effectsDays } });
      return interrupted ? ExitCode.Interrupted : ExitCode.Ok;
    }
    context.out.line(
      formatTable(
        [{ title: "state" }, { title: "retention", align: "right" }, { title: "deleted", align: "right" }],
        retention.map(([state, days]) => [state, `${days} days`, formatCount(deleted[state])]),
      ),
    );
    context.out.line(`${interrupted ? "Interrupted after deleting" : "Deleted"} ${formatCount(total)} finished jobs.`);
    if (queues === undefined) context.out.line(`Deleted ${formatCount(effects)} effect records older than ${effectsDays} days.`);
    context.out.line(`Deleted ${formatCount(windows)} closed unique windows.`);
    return interrupted ? ExitCode.Interrupted : ExitCode.Ok;
  },
};
