import { ExitCode, type QueueControls } from "@stint/core";
import { assertQueueName } from "@stint/core/driver";
import { appModuleOption } from "../app/app-option";
import { flagOption, type Command, type CommandContext, type OptionSpec } from "../command";
import { assertQueuesKnown } from "../input/queue-in-use";

/** The options `pause` and `resume` share: how a queue's name is checked. */
const QUEUE_CHECK_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  app: { type: "string", value: "MODULE", description: "also know the queues this app module has workers for (default: $STINT_APP)" },
  force: { type: "boolean", description: "change a queue stint does not know (see the notes above)" },
};

/** Why a name is refused, and how to go on: the same for `pause` and `resume`. */
const QUEUE_CHECK_NOTES = [
  "A queue with no jobs, no schedule and no pause or limit in the database, and no worker in --app (or",
  "$STINT_APP), is refused as probably misspelt (exit 78), and no queue is changed; --force goes on anyway.",
];

/**
 * `stint pause <queue…>` and `stint resume <queue…>`: every worker of the
 * queues stops claiming (jobs running now finish; jobs a worker holds but
 * has not started go back) or claims again. Enqueues keep working while a
 * queue is paused. Workers hear of the change at once through the wake-up
 * channel, or at their next poll. A queue nothing knows is refused as
 * probably misspelt unless `--force`, as `stint enqueue` does.
 */
export const pauseCommand: Command = {
  name: "pause",
  summary: "Stop every worker from starting jobs of some queues (running jobs finish)",
  usage: ["pause <queue…> [--app MODULE | --force] [--json]"],
  args: { min: 1, max: Number.POSITIVE_INFINITY },
  json: true,
  options: QUEUE_CHECK_OPTIONS,
  notes: [
    "Jobs can still be enqueued. `stint resume <queue>` lets the workers claim again; `stint status` shows paused queues.",
    ...QUEUE_CHECK_NOTES,
    "",
    "Examples:",
    "  stint pause send-invoice",
    "  stint pause nightly-export --app ./dist/stint-app.js   (a queue with no jobs yet, known to the app)",
  ],
  run: (context) => setPaused(context, true),
};

/** `stint resume <queue…>`: see {@link pauseCommand}. */
export const resumeCommand: Command = {
  name: "resume",
  summary: "Let the workers of paused queues claim again",
  usage: ["resume <queue…> [--app MODULE | --force] [--json]"],
  args: { min: 1, max: Number.POSITIVE_INFINITY },
  json: true,
  options: QUEUE_CHECK_OPTIONS,
  notes: ["Workers listening for wake-ups claim at once; the others at their next poll. A paused queue is always known.", ...QUEUE_CHECK_NOTES],
  run: (context) => setPaused(context, false),
};

async function setPaused(context: CommandContext, paused: boolean): Promise<number> {
  const queues = [...new Set(context.positionals.map((queue) => assertQueueName(queue)))];
  const connection = await context.connect();
  if (!flagOption(context, "force")) {
    await assertQueuesKnown(context, connection, queues, { forcing: `${paused ? "pause" : "resume"} anyway`, controls: true, app: appModuleOption(context) });
  }
  const changed: QueueControls[] = [];
  for (const queue of queues) changed.push(await connection.store.setQueueControls(queue, { paused }));
  if (context.json) context.out.json({ queues: changed.map(({ queue, paused: now }) => ({ queue, paused: now })) });
  else for (const { queue } of changed) context.out.line(`${paused ? "Paused" : "Resumed"} queue ${queue}.`);
  return ExitCode.Ok;
}
