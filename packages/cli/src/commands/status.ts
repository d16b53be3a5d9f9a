import { ExitCode, type JobStore, type QueueControls } from "@stint/core";
import { formatRateLimit } from "@stint/core/internal";
import type { Command } from "../command";
import { countQueues } from "../connection/driver-features";
import { formatCount, formatTable } from "../output/table";
import { describeControls } from "../output/controls-text";
import { humanDuration } from "../output/time-text";

/** The window of the "done" column: jobs that succeeded in the last five minutes. */
export const COMPLETED_WINDOW_MS = 5 * 60_000;

/**
 * `stint status`: one row per queue with its blocked (workflow steps
 * waiting for their dependencies, when any), queued, due, running, retrying
 * (`failed`) and dead jobs, the age of the oldest due job (the queue lag)
 * and the jobs that succeeded in the last five minutes, and the controls
 * an operator set on it (paused, running cap, rate limit).
 */
export const statusCommand: Command = {
  name: "status",
  summary: "Show each queue's jobs by state, its lag and recent throughput",
  usage: ["status [queue…] [--json]"],
  args: { min: 0, max: Number.POSITIVE_INFINITY },
  json: true,
  options: {},
  notes: [
    "Columns: blocked (workflow steps waiting for the steps they depend on; shown when a queue has one),",
    "queued (waiting, due or not), due (waiting and due now), running, retrying (failed, retry scheduled),",
    "dead, oldest due (age of the oldest due job: the queue lag), done 5m (succeeded in the last 5 minutes),",
    "controls (paused, max N running, max N per group, a rate limit, a retention of its own; see `stint pause`,",
    "`stint limit` and `stint retention`). `stint groups <queue>` lists a queue's busiest groups.",
    "Jobs a worker claimed ahead of its free slots (its prefetch) count as running.",
  ],
  async run(context) {
    const { store } = await context.connect();
    const queues = context.positionals.length === 0 ? undefined : context.positionals;
    const controls = new Map((await store.listQueueControls()).map((entry) => [entry.queue, entry]));
    const counted = await countQueues(store, { ...(queues === undefined ? {} : { queues }), completedSinceMs: COMPLETED_WINDOW_MS });
    // A queue an operator paused or capped shows even before it has jobs.
    const rows = queues === undefined ? byQueue([...counted, ...(await countControlledOnly(store, counted, controls))]) : counted;
    if (context.json) {
      context.out.json({
        schema: context.schema,
        queues: rows.map((row) => ({
          queue: row.queue,
          blocked: row.counts.blocked,
          queued: row.counts.queued,
          due: row.due,
          running: row.counts.running,
          retrying: row.counts.failed,
          dead: row.counts.dead,
          succeeded: row.counts.succeeded,
          cancelled: row.counts.cancelled,
          oldestDueAgeMs: row.oldestDueAgeMs,
          completedLast5m: row.completedRecently,
          paused: controls.get(row.queue)?.paused ?? false,
          maxRunning: controls.get(row.queue)?.maxRunning ?? null,
          maxRunningPerGroup: controls.get(row.queue)?.maxRunningPerGroup ?? null,
          rateLimit: rateLimitText(controls.get(row.queue)),
          retentionDays: controls.get(row.queue)?.retention ?? { succeededDays: null, deadDays: null, cancelledDays: null },
        })),
      });
      return ExitCode.Ok;
    }
    if (rows.length === 0) {
      context.out.line(`No jobs in schema "${context.schema}".`);
      return ExitCode.Ok;
    }
    const right = "right" as const;
    // Only schemas with workflows have blocked steps: the column shows when a listed queue has one.
    const showBlocked = rows.some((row) => row.counts.blocked > 0);
    context.out.line(
      formatTable(
        [
          { title: "queue" },
          ...(showBlocked ? [{ title: "blocked", align: right }] : []),
          { title: "queued", align: right },
          { title: "due", align: right },
          { title: "running", align: right },
          { title: "retrying", align: right },
          { title: "dead", align: right },
          { title: "oldest due", align: right },
          { title: "done 5m", align: right },
          { title: "controls" },
        ],
        rows.map((row) => [
          row.queue,
          ...(showBlocked ? [formatCount(row.counts.blocked)] : []),
          formatCount(row.counts.queued),
          formatCount(row.due),
          formatCount(row.counts.running),
          formatCount(row.counts.failed),
          formatCount(row.counts.dead),
          row.oldestDueAgeMs === null ? "-" : humanDuration(row.oldestDueAgeMs),
          row.completedRecently === null ? "n/a" : formatCount(row.completedRecently),
          describeControls(controls.get(row.queue)),
        ]),
      ),
    );
    return ExitCode.Ok;
  },
};

/** The queues that have controls set but no jobs yet, counted (all zeros). */
async function countControlledOnly(store: JobStore, counted: readonly { readonly queue: string }[], controls: ReadonlyMap<string, QueueControls>) {
  const seen = new Set(counted.map((row) => row.queue));
  const missing = [...controls.keys()].filter((queue) => !seen.has(queue));
  return missing.length === 0 ? [] : countQueues(store, { queues: missing, completedSinceMs: COMPLETED_WINDOW_MS });
}

function rateLimitText(controls: QueueControls | undefined): string | null {
  return controls?.rateLimit == null ? null : formatRateLimit(controls.rateLimit);
}

function byQueue<R extends { readonly queue: string }>(rows: R[]): R[] {
  return rows.sort((a, b) => (a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : 0));
}
