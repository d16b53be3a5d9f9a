import { ExitCode } from "@stint/core";
import { workflowIdArgument, workflowNotFound } from "../args/workflow-id";
import { wrongStateError } from "../cli-error";
import type { Command } from "../command";
import { formatCount } from "../output/table";

/**
 * `stint workflows cancel <id>`: cancels every step of a running workflow
 * that has not finished (`JobStore.cancelWorkflow`): blocked, queued and
 * retrying steps at once, running ones as `stint cancel` cancels a running
 * job (their workers are told to stop them). Exit 3 for an unknown id, 4
 * for a workflow that has already finished (nothing is changed).
 */
export const workflowsCancelCommand: Command = {
  name: "workflows cancel",
  summary: "Cancel a workflow: every step of it that has not finished",
  usage: ["workflows cancel <id> [--json]"],
  args: { min: 1, max: 1 },
  json: true,
  options: {},
  notes: [
    "Blocked, queued and retrying steps are cancelled at once; a running step's worker is told to stop its handler",
    "(its `ctx.signal` aborts with STINT_CANCELLED). Steps that finished stay as they are. The workflow is then",
    "cancelled. Retrying a cancelled step (`stint retry <job>`) resumes the workflow from it.",
    "",
    "Exit codes: 0 cancelled; 3 no such workflow; 4 the workflow has already finished.",
    "",
    "Example: stint workflows cancel 41",
  ],
  async run(context) {
    const id = workflowIdArgument(context.positionals[0]!);
    const { store } = await context.connect();
    // Read first: cancelling a finished workflow would still mark it cancelled, which would misreport how it ended.
    const before = await store.getWorkflow({ id });
    if (before === undefined) throw workflowNotFound(id, context.schema);
    if (before.state !== "running") throw wrongStateError(`workflow ${id} has already finished (${before.state}): nothing to cancel`);
    const running = before.steps.filter((step) => step.state === "running").length;
    const cancelled = await store.cancelWorkflow({ id });
    if (cancelled === undefined) throw workflowNotFound(id, context.schema);
    if (context.json) {
      context.out.json({ id, name: before.name, cancelled });
      return ExitCode.Ok;
    }
    const told = running > 0 ? `; the workers of its running steps are told to stop them` : "";
    context.out.line(`Cancelled workflow ${id} (${before.name}): ${formatCount(cancelled)} ${cancelled === 1 ? "step" : "steps"}${told}.`);
    return ExitCode.Ok;
  },
};
