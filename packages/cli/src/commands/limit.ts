import { ExitCode } from "@stint/core";
import { formatRateLimit, parseRateLimit, MAX_RUNNING_CAP } from "@stint/core/internal";
import { assertQueueName, type QueueControlsChange } from "@stint/core/driver";
import { appModuleOption } from "../app/app-option";
import { integerValue } from "../args/option-values";
import { configError } from "../cli-error";
import { flagOption, stringOption, type Command } from "../command";
import { assertQueuesKnown } from "../input/queue-in-use";
import { describeControls } from "../output/controls-text";

/**
 * `stint limit <queue> [--max-running N|none] [--max-running-per-group N|none] [--rate N/period|none]`:
 * caps the queue's running jobs across every worker, those of each of its
 * groups, or its starts per period (`100/min`, `50/s`, `5/10s`); `none`
 * removes one. Without options
 * it prints the queue's controls. A queue nothing knows is refused as
 * probably misspelt unless `--force`, as `stint enqueue` does.
 */
export const limitCommand: Command = {
  name: "limit",
  summary: "Cap a queue's running jobs, per queue or per group, or its starts per period, across all workers",
  usage: ["limit <queue> [--max-running N|none] [--max-running-per-group N|none] [--rate N/PERIOD|none] [--app MODULE | --force] [--json]"],
  args: { min: 1, max: 1 },
  json: true,
  options: {
    "max-running": { type: "string", value: "N|none", description: "at most N jobs of the queue running at once, across every worker" },
    "max-running-per-group": {
      type: "string",
      value: "N|none",
      description: "at most N jobs of one group (enqueued with `group`) running at once, across every worker",
    },
    rate: { type: "string", value: "N/PERIOD|none", description: "at most N starts per period, e.g. 100/min, 50/s, 5/10s" },
    app: { type: "string", value: "MODULE", description: "also know the queues this app module has workers for (default: $STINT_APP)" },
    force: { type: "boolean", description: "limit (or show) a queue stint does not know (see the notes above)" },
  },
  notes: [
    "Jobs over a cap or a limit stay queued; nothing fails. Workers apply a change at their next claim.",
    "A rate limit starts jobs evenly: a burst is at most a tenth of a second's worth (at least one job).",
    "A queue with no jobs, no schedule and no pause or limit in the database, and no worker in --app (or",
    "$STINT_APP), is refused as probably misspelt (exit 78) and left as it is; --force goes on anyway.",
    "",
    "Examples:",
    "  stint limit charge-card --max-running 3",
    "  stint limit sync-tenant --max-running-per-group 2   (each tenant's jobs at most 2 at a time)",
    "  stint limit call-partner-api --rate 100/min",
    "  stint limit call-partner-api --rate none",
    "  stint limit charge-card --max-running 3 --app ./dist/stint-app.js   (a queue with no jobs yet, known to the app)",
  ],
  async run(context) {
    const queue = assertQueueName(context.positionals[0]!);
    const maxRunning = stringOption(context, "max-running");
    const perGroup = stringOption(context, "max-running-per-group");
    const rate = stringOption(context, "rate");
    const change: QueueControlsChange = {
      ...(maxRunning === undefined ? {} : { maxRunning: maxRunning === "none" ? null : integerValue("--max-running", maxRunning, 1, MAX_RUNNING_CAP) }),
      ...(perGroup === undefined
        ? {}
        : { maxRunningPerGroup: perGroup === "none" ? null : integerValue("--max-running-per-group", perGroup, 1, MAX_RUNNING_CAP) }),
      ...(rate === undefined ? {} : { rateLimit: rate === "none" ? null : parseRateLimitOption(rate) }),
    };
    const connection = await context.connect();
    if (!flagOption(context, "force")) {
      await assertQueuesKnown(context, connection, [queue], { forcing: "limit anyway", controls: true, app: appModuleOption(context) });
    }
    const { store } = connection;
    const controls =
      Object.keys(change).length > 0 ? await store.setQueueControls(queue, change) : (await store.listQueueControls()).find((entry) => entry.queue === queue);
    if (context.json) {
      context.out.json({
        queue,
        paused: controls?.paused ?? false,
        maxRunning: controls?.maxRunning ?? null,
        maxRunningPerGroup: controls?.maxRunningPerGroup ?? null,
        rateLimit: controls?.rateLimit == null ? null : formatRateLimit(controls.rateLimit),
      });
    } else {
      context.out.line(`${queue}: ${describeControls(controls)}`);
    }
    return ExitCode.Ok;
  },
};

function parseRateLimitOption(text: string) {
  try {
    return parseRateLimit(text, "--rate");
  } catch (thrown) {
    throw configError(thrown instanceof Error ? thrown.message : String(thrown));
  }
}
