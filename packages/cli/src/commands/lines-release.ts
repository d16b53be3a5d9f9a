import { ExitCode } from "@stint/core";
import { assertQueueName, assertStorableKey, MAX_GROUP_KEY_LENGTH } from "@stint/core/driver";
import { wrongStateError } from "../cli-error";
import type { Command } from "../command";
import { shellWord } from "../output/shell-word";

/**
 * `stint lines release <queue> <key>`: lets a serial line that a dead job
 * holds go on (`QueueAdmin.releaseLine`): the line's next job may start at
 * the next claim; the dead job stays dead (retry it instead to run it
 * first). Exit 4 (`STINT_WRONG_STATE`) when the line is not held.
 */
export const linesReleaseCommand: Command = {
  name: "lines release",
  summary: "Let a serial line that a dead job holds go on (the dead job stays dead)",
  usage: ["lines release <queue> <key> [--json]"],
  args: { min: 2, max: 2 },
  json: true,
  options: {},
  notes: [
    'A job enqueued with a serial key that dies holds its line (serialOnDead "hold", the default): no later job of',
    "that key starts until the dead job is retried (`stint retry <id>`: it runs first) or the line is released.",
    "`stint groups <queue>` shows held lines and the dead job that holds each. Exit 4 when the line is not held.",
    "",
    "Example: stint lines release post-ledger-entry account:42",
  ],
  async run(context) {
    const queue = assertQueueName(context.positionals[0]!);
    const key = assertStorableKey("key", context.positionals[1]!, MAX_GROUP_KEY_LENGTH);
    const { store } = await context.connect();
    const released = await store.releaseLine({ queue, key });
    if (!released) {
      throw wrongStateError(
        `serial line ${JSON.stringify(key)} of queue ${queue} is not held: nothing to release ` +
          `(a line is held only by a dead job of it; see stint groups ${queue}, and stint jobs list --queue ${queue} --serial-key ${shellWord(key)})`,
      );
    }
    if (context.json) context.out.json({ queue, key, released: true });
    else context.out.line(`Released serial line ${JSON.stringify(key)} of queue ${queue}: its next job may start.`);
    return ExitCode.Ok;
  },
};
