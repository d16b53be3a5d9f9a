import { ExitCode, type QueueRetentionChange } from "@stint/core";
import { assertQueueName } from "@stint/core/driver";
import { appModuleOption } from "../app/app-option";
import { integerValue } from "../args/option-values";
import { STATE_DAYS_OPTIONS, stateDaysOptions } from "../args/state-days-options";
import { flagOption, stringOption, type Command, type CommandContext } from "../command";
import { assertQueuesKnown } from "../input/queue-in-use";
import { describeRetention } from "../output/controls-text";
import { usageError } from "../cli-error";
import { listRetention } from "./retention-list";

const FIELD = { succeeded: "succeededDays", dead: "deadDays", cancelled: "cancelledDays" } as const;

/**
 * `stint retention <queue> [--succeeded-days N|global] [--dead-days N|global]
 * [--cancelled-days N|global]`: how many days the queue keeps its finished
 * jobs of each state, in place of the global retention of the maintenance
 * pass (and of `stint prune`); `global` goes back to it. Without options it
 * prints the queue's retention, and without a queue every queue's
 * (`listRetention`). A queue nothing knows is refused as probably misspelt
 * unless `--force`, as `stint limit` does.
 */
export const retentionCommand: Command = {
  name: "retention",
  summary: "Keep a queue's finished jobs for days of its own, per state",
  usage: [
    "retention <queue> [--succeeded-days N|global] [--dead-days N|global] [--cancelled-days N|global] [--app MODULE | --force] [--json]",
    "retention [--app MODULE] [--json]",
  ],
  args: { min: 0, max: 1 },
  json: true,
  options: {
    ...stateDaysOptions("N|global", (state) => `keep the queue's ${state} jobs N days (0 to 36500), or as the global retention`),
    app: { type: "string", value: "MODULE", description: "also know the queues this app module has workers for (default: $STINT_APP)" },
    force: { type: "boolean", description: "set (or show) the retention of a queue stint does not know" },
  },
  notes: [
    "Without a queue, it lists every queue (with a job, a schedule or controls, and with --app the app's) and the days",
    "each keeps its finished jobs per state: its own, or the global retention's (stint run's maintenance pass: 7 days,",
    "30 for dead jobs; stint prune: its --succeeded-days, --dead-days and --cancelled-days).",
    "The maintenance pass reads it at its next run, in every process; `stint prune` honours it too.",
    "A queue kept longer than the global retention keeps its jobs through the drop of their day (they move to",
    "finished_jobs_kept) and loses them row by row once past its own days; one kept shorter is pruned row by row.",
    "",
    "Examples:",
    "  stint retention payments --dead-days 365 --succeeded-days 90",
    "  stint retention thumbnails --succeeded-days 0 --cancelled-days 0",
    "  stint retention payments --succeeded-days global",
    "  stint retention --json",
  ],
  async run(context) {
    const change = retentionChange(context);
    if (context.positionals.length === 0) {
      if (Object.keys(change).length > 0) throw usageError("retention: name the queue whose retention to set (stint retention <queue> --dead-days N)");
      return listRetention(context);
    }
    const queue = assertQueueName(context.positionals[0]!);
    const connection = await context.connect();
    if (!flagOption(context, "force")) {
      await assertQueuesKnown(context, connection, [queue], { forcing: "set it anyway", controls: true, app: appModuleOption(context) });
    }
    const { store } = connection;
    const controls =
      Object.keys(change).length > 0
        ? await store.setQueueControls(queue, { retention: change })
        : (await store.listQueueControls()).find((entry) => entry.queue === queue);
    const retention = controls?.retention ?? { succeededDays: null, deadDays: null, cancelledDays: null };
    if (context.json) context.out.json({ queue, retentionDays: retention });
    else context.out.line(`${queue}: ${describeRetention(retention, "keeps finished jobs as the global retention")}`);
    return ExitCode.Ok;
  },
};

function retentionChange(context: CommandContext): QueueRetentionChange {
  const change: Record<string, number | null> = {};
  for (const [state, option] of STATE_DAYS_OPTIONS) {
    const text = stringOption(context, option);
    if (text !== undefined) change[FIELD[state]] = text === "global" ? null : integerValue(`--${option}`, text, 0, 36_500);
  }
  return change;
}
