import { ExitCode } from "@stint/core";
import { assertQueueName, GROUP_WAITING_COUNT_CAP, MAX_GROUPS_LISTED, type GroupSummary } from "@stint/core/driver";
import { integerValue } from "../args/option-values";
import { stringOption, type Command } from "../command";
import { describeControls } from "../output/controls-text";
import { formatCount, formatTable, truncate } from "../output/table";

/**
 * `stint groups <queue>`: the queue's busiest groups and serial lines, most
 * running first, then most waiting, then held lines (`JobStore.listGroups`),
 * with the queue's controls (its cap per group). Waiting jobs are counted
 * up to `GROUP_WAITING_COUNT_CAP` per group (shown as `10,000+`).
 */
export const groupsCommand: Command = {
  name: "groups",
  summary: "List a queue's busiest groups and serial lines: running, waiting, held",
  usage: ["groups <queue> [--limit 20] [--json]"],
  args: { min: 1, max: 1 },
  json: true,
  options: {
    limit: { type: "string", value: "N", description: `at most N groups, 1 to ${MAX_GROUPS_LISTED} (default 20)` },
  },
  notes: [
    "Columns: group (a serial line shows as `line KEY`), running, waiting (queued, or failed with a retry",
    `scheduled; counted up to ${formatCount(GROUP_WAITING_COUNT_CAP)} a group), held by (the dead job that holds a serial line:`,
    "retry it, or let the line go on with `stint lines release <queue> <key>`).",
    "A queue's cap per group is set with `stint limit <queue> --max-running-per-group N`.",
    "",
    "Example: stint groups sync-tenant --limit 50",
  ],
  async run(context) {
    const queue = assertQueueName(context.positionals[0]!);
    const limit = integerValue("--limit", stringOption(context, "limit") ?? "20", 1, MAX_GROUPS_LISTED);
    const { store } = await context.connect();
    const [groups, controls] = await Promise.all([store.listGroups({ queues: [queue], limit }), store.listQueueControls()]);
    const queueControls = controls.find((entry) => entry.queue === queue);
    if (context.json) {
      context.out.json({
        queue,
        maxRunningPerGroup: queueControls?.maxRunningPerGroup ?? null,
        waitingCountCap: GROUP_WAITING_COUNT_CAP,
        groups: groups.map(({ key, serial, running, waiting, heldBy }) => ({ key, serial, running, waiting, heldBy })),
      });
      return ExitCode.Ok;
    }
    context.out.line(`${queue}: ${describeControls(queueControls)}`);
    if (groups.length === 0) {
      context.out.line("No group or serial line has running or waiting jobs.");
      return ExitCode.Ok;
    }
    const right = "right" as const;
    context.out.line(
      formatTable(
        [{ title: "group" }, { title: "running", align: right }, { title: "waiting", align: right }, { title: "held by" }],
        groups.map((group) => [groupName(group), formatCount(group.running), waitingText(group.waiting), group.heldBy === null ? "" : `job ${group.heldBy}`]),
      ),
    );
    if (groups.length === limit) context.out.line(`\nThe ${limit} busiest shown; --limit shows more.`);
    return ExitCode.Ok;
  },
};

function groupName(group: GroupSummary): string {
  const key = truncate(group.key, 60);
  return group.serial ? `line ${key}` : key;
}

function waitingText(waiting: number | null): string {
  if (waiting === null) return "-";
  return waiting >= GROUP_WAITING_COUNT_CAP ? `${formatCount(waiting)}+` : formatCount(waiting);
}
