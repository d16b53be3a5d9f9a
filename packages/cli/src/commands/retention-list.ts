import { ExitCode, type QueueRetention } from "@stint/core";
import { DEFAULT_RETENTION_DAYS } from "@stint/core/internal";
import { appJobKinds } from "../app/app-job-kind";
import { appModuleOption } from "../app/app-option";
import { PRUNE_DEFAULT_DAYS } from "../args/state-days-options";
import type { CommandContext } from "../command";
import { formatTable } from "../output/table";

/** Days per finished state, as `QueueRetention` names them. */
type RetentionDays = Readonly<Record<keyof QueueRetention, number>>;

/** The global retention of `stint run`'s maintenance pass (cancelled jobs kept as succeeded ones). */
const MAINTENANCE_DAYS: RetentionDays = Object.freeze({
  succeededDays: DEFAULT_RETENTION_DAYS.succeededDays,
  deadDays: DEFAULT_RETENTION_DAYS.deadDays,
  cancelledDays: DEFAULT_RETENTION_DAYS.succeededDays,
});
const PRUNE_DAYS: RetentionDays = Object.freeze({
  succeededDays: PRUNE_DEFAULT_DAYS.succeeded,
  deadDays: PRUNE_DEFAULT_DAYS.dead,
  cancelledDays: PRUNE_DEFAULT_DAYS.cancelled,
});
const FIELDS = ["succeededDays", "deadDays", "cancelledDays"] as const;
const NONE: QueueRetention = Object.freeze({ succeededDays: null, deadDays: null, cancelledDays: null });

/**
 * `stint retention` without a queue: every queue the database knows (a
 * job, a schedule, a control row) and, with `--app`, every queue the app
 * has a worker for, with the days its finished jobs are kept per state —
 * its own (`stint retention <queue> --dead-days N`) or the global
 * retention's, which is `stint run`'s maintenance pass's (7 days, 30 for
 * dead jobs; `stint prune` takes its own days). Read from the database:
 * what `stint run --print-config`, which does not connect, points to.
 *
 * @example
 * ```ts
 * return listRetention(context); // audit  90d (own)  365d (own)  7d (global)
 * ```
 */
export async function listRetention(context: CommandContext): Promise<number> {
  const { store, schedules } = await context.connect();
  const controls = new Map((await store.listQueueControls()).map((entry) => [entry.queue, entry.retention]));
  const specifier = appModuleOption(context);
  const names = new Set([
    ...controls.keys(),
    ...((await schedules?.listSchedules()) ?? []).map((schedule) => schedule.queue),
    ...(await store.countByQueue()).map((row) => row.queue),
    ...(specifier === undefined ? [] : (await appJobKinds(context, specifier)).map((kind) => kind.name)),
  ]);
  const queues = [...names].sort().map((queue) => {
    const own = controls.get(queue) ?? NONE;
    const effective = Object.fromEntries(FIELDS.map((field) => [field, own[field] ?? MAINTENANCE_DAYS[field]])) as RetentionDays;
    return { queue, retentionDays: own, effectiveDays: effective };
  });
  if (context.json) {
    context.out.json({ global: { maintenance: MAINTENANCE_DAYS, prune: PRUNE_DAYS }, queues });
    return ExitCode.Ok;
  }
  if (queues.length === 0) {
    context.out.line(`No queues in schema "${context.schema}".`);
  } else {
    const cell = (own: number | null, global: number) => (own === null ? `${global}d (global)` : `${own}d (own)`);
    context.out.line(
      formatTable(
        [{ title: "queue" }, { title: "succeeded" }, { title: "dead" }, { title: "cancelled" }],
        queues.map(({ queue, retentionDays }) => [queue, ...FIELDS.map((field) => cell(retentionDays[field], MAINTENANCE_DAYS[field]))]),
      ),
    );
  }
  context.out.line(
    `Global: the retention of stint run's maintenance pass (succeeded and cancelled ${MAINTENANCE_DAYS.succeededDays}d, dead ${MAINTENANCE_DAYS.deadDays}d); ` +
      `stint prune keeps its --succeeded-days, --dead-days and --cancelled-days there (default ${PRUNE_DAYS.succeededDays}, ${PRUNE_DAYS.deadDays}, ${PRUNE_DAYS.cancelledDays}).`,
  );
  return ExitCode.Ok;
}
