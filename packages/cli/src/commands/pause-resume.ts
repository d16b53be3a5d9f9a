import { ExitCode, type QueueControls } from "@stint/core";
import { assertQueueName } from "@stint/core/driver";
import type { Command, CommandContext } from "../command";

/**
 * `stint pause <queue…>` and `stint resume <queue…>`: every worker of the
 * queues stops claiming (jobs running now finish; jobs a worker holds but
 * has not started go back) or claims again. Enqueues keep working while a
 * queue is paused. Workers hear of the change at once through the wake-up
 * channel, or at their next poll.
 */
export const pauseCommand: Command = {
  name: "pause",
  summary: "Stop every worker from starting jobs of some queues (running jobs finish)",
  usage: ["pause <queue…> [--json]"],
  args: { min: 1, max: Number.POSITIVE_INFINITY },
  json: true,
  options: {},
  notes: ["Jobs can still be enqueued. `stint resume <queue>` lets the workers claim again; `stint status` shows paused queues."],
  run: (context) => setPaused(context, true),
};

/** `stint resume <queue…>`: see {@link pauseCommand}. */
export const resumeCommand: Command = {
  name: "resume",
  summary: "Let the workers of paused queues claim again",
  usage: ["resume <queue…> [--json]"],
  args: { min: 1, max: Number.POSITIVE_INFINITY },
  json: true,
  options: {},
  notes: ["Workers listening for wake-ups claim at once; the others at their next poll."],
  run: (context) => setPaused(context, false),
};

async function setPaused(context: CommandContext, paused: boolean): Promise<number> {
  const queues = [...new Set(context.positionals.map((queue) => assertQueueName(queue)))];
  const { store } = await context.connect();
  const changed: QueueControls[] = [];
  for (const queue of queues) changed.push(await store.setQueueControls(queue, { paused }));
  if (context.json) context.out.json({ queues: changed.map(({ queue, paused: now }) => ({ queue, paused: now })) });
  else for (const { queue } of changed) context.out.line(`${paused ? "Paused" : "Resumed"} queue ${queue}.`);
  return ExitCode.Ok;
}
