import { jobIdValue } from "../args/option-values";
import { jobNotFound, usageError, wrongStateError } from "../cli-error";
import type { Command } from "../command";
import { ExitCode } from "@stint/core";

/**
 * `stint cancel <id>`: cancels a queued, retrying or running job. A running
 * attempt carries on in its worker, but its outcome is discarded. Exit 3
 * when there is no such job, 4 when it has already finished.
 */
export const cancelCommand: Command = {
  name: "cancel",
  summary: "Cancel a job that has not finished",
  usage: ["cancel <id> [--json]"],
  args: { min: 1, max: 1 },
  json: true,
  options: {},
  notes: ["A running attempt is not interrupted, but its outcome is discarded: the job stays cancelled."],
  async run(context) {
    const id = jobIdValue(context.positionals[0]!);
    if (id === undefined) throw usageError(`job id must be a positive integer, got ${JSON.stringify(context.positionals[0])}`);
    const { store } = await context.connect();
    if (!(await store.cancelJob({ id }))) {
      const job = await store.getJob({ id });
      if (job === undefined) throw jobNotFound(id, context.schema);
      throw wrongStateError(`job ${id} has already finished (${job.state}): only queued, running or failed jobs can be cancelled`);
    }
    if (context.json) context.out.json({ id, cancelled: true });
    else context.out.line(`Cancelled job ${id}.`);
    return ExitCode.Ok;
  },
};
