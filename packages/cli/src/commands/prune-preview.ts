import { ExitCode } from "@stint/core";
import type { CountsByState, RetainedState, RetentionPreview } from "@stint/postgres-driver";
import type { CommandContext } from "../command";
import { formatCount, formatTable } from "../output/table";

/** The retention `stint prune` was given, as it prints it. */
export interface PruneRetention {
  /** Days per state, in the order the passes run. */
  readonly retention: readonly (readonly [RetainedState, number])[];
  readonly effectsDays: number;
}

/**
 * Prints what `stint prune --dry-run` found (`previewRetention`, one pass
 * per state): per state, the jobs that would go with whole partitions, row
 * by row, and those past their retention that wait for their whole day;
 * then the partitions that would be dropped whole, with the jobs they hold
 * and the jobs of other states they would move to `finished_jobs_kept`;
 * then the effect records and the `closedWindows` unique windows that would
 * go. With `--json`, the same as one document. Returns the exit code.
 *
 * @example
 * ```ts
 * return printPrunePreview(context, await previewRetention(db, schema, { passes }), { retention, effectsDays: 30 }, await countClosedWindows(db, schema));
 * ```
 */
export function printPrunePreview(context: CommandContext, preview: RetentionPreview, given: PruneRetention, closedWindows: number): number {
  const inPartitions = sum(preview.passes.map((pass) => pass.inPartitions));
  const rowByRow = sum(preview.passes.map((pass) => pass.rowByRow));
  const waiting = sum(preview.passes.map((pass) => pass.waiting));
  const wouldDelete = sum([inPartitions, rowByRow]);
  const partitions = preview.passes.flatMap((pass) => pass.partitions.map((partition) => ({ ...partition, states: pass.pass.states })));
  const total = wouldDelete.succeeded + wouldDelete.dead + wouldDelete.cancelled;
  if (context.json) {
    const retentionDays = { ...Object.fromEntries(given.retention), effects: given.effectsDays };
    context.out.json({
      dryRun: true,
      wouldDelete,
      total,
      inPartitions,
      rowByRow,
      waiting,
      partitions,
      effects: preview.effects ?? null,
      windows: closedWindows,
      retentionDays,
    });
    return ExitCode.Ok;
  }
  context.out.line(
    formatTable(
      [
        { title: "state" },
        { title: "retention", align: "right" },
        { title: "would go", align: "right" },
        { title: "with partitions", align: "right" },
        { title: "row by row", align: "right" },
        { title: "waiting for their day", align: "right" },
      ],
      given.retention.map(([state, days]) => [
        state,
        `${days} days`,
        formatCount(wouldDelete[state]),
        formatCount(inPartitions[state]),
        formatCount(rowByRow[state]),
        formatCount(waiting[state]),
      ]),
    ),
  );
  if (partitions.length > 0) {
    context.out.line("");
    context.out.line(
      formatTable(
        [{ title: "partition dropped whole" }, { title: "day" }, { title: "jobs", align: "right" }, { title: "moved to finished_jobs_kept", align: "right" }],
        partitions.map((partition) => [partition.name, partition.day, formatCount(partition.jobs), formatCount(partition.kept)]),
      ),
    );
    context.out.line("");
  }
  const dropped = sumOf(inPartitions);
  const plural = partitions.length === 1 ? "" : "s";
  context.out.line(
    `Dry run, nothing deleted: ${formatCount(total)} finished jobs would go, ` +
      `${formatCount(dropped)} with ${formatCount(partitions.length)} partition${plural} dropped whole and ${formatCount(sumOf(rowByRow))} row by row.`,
  );
  if (sumOf(waiting) > 0) {
    context.out.line(`${formatCount(sumOf(waiting))} more are past their retention but stay until their whole day is (at most a day).`);
  }
  if (preview.effects !== undefined) context.out.line(`${formatCount(preview.effects)} effect records older than ${given.effectsDays} days would go.`);
  context.out.line(`${formatCount(closedWindows)} closed unique windows would go.`);
  return ExitCode.Ok;
}

function sum(counts: readonly CountsByState[]): Record<RetainedState, number> {
  const total = { succeeded: 0, dead: 0, cancelled: 0 };
  for (const count of counts) for (const state of ["succeeded", "dead", "cancelled"] as const) total[state] += count[state];
  return total;
}

function sumOf(counts: CountsByState): number {
  return counts.succeeded + counts.dead + counts.cancelled;
}
