import { ExitCode, type WorkflowState } from "@stint/core";
import { MAX_PAGE_SIZE } from "@stint/core/driver";
import { assertWorkflowName } from "@stint/core/internal";
import { beforeIdOption, integerValue } from "../args/option-values";
import { configError } from "../cli-error";
import { stringOption, type Command } from "../command";
import { formatCount, formatTable, truncate } from "../output/table";
import { formatTime } from "../output/time-text";
import { workflowSummaryJson } from "../output/workflow-json";
import { stateCounts } from "../output/workflow-steps";

/** The states a workflow derives from its steps (see `WorkflowState`). */
export const WORKFLOW_STATES: readonly WorkflowState[] = Object.freeze(["running", "succeeded", "failed", "cancelled"]);

/**
 * `stint workflows list`: workflows newest first (`JobStore.listWorkflows`),
 * each with its state, how many of its steps succeeded of all, its steps
 * counted by state, and when it was created and finished.
 */
export const workflowsListCommand: Command = {
  name: "workflows list",
  summary: "List workflows newest first: state, steps done, steps by state",
  usage: ["workflows list [--state running|succeeded|failed|cancelled] [--name NAME] [--limit 20] [--before-id ID] [--json]"],
  args: { min: 0, max: 0 },
  json: true,
  options: {
    state: { type: "string", value: "STATE", description: `only workflows in this state: ${WORKFLOW_STATES.join(", ")}` },
    name: { type: "string", value: "NAME", description: "only workflows of this name (as given to enqueueWorkflow)" },
    limit: { type: "string", value: "N", description: `at most N workflows, 1 to ${MAX_PAGE_SIZE} (default 20)` },
    "before-id": { type: "string", value: "ID", description: "only workflows older than this id (the next page)" },
  },
  notes: [
    "A workflow is running while a step is blocked, queued, running or waiting for a retry; succeeded when every step",
    "succeeded; failed when nothing is left to run and a step is dead (or was cancelled because one was); cancelled",
    "when an operator cancelled it. Columns: done (steps that succeeded, of all), steps (its steps by state), created,",
    "finished (when its last step finished). `stint workflows show <id>` shows its steps.",
    "",
    "Examples:",
    "  stint workflows list --state failed",
    "  stint workflows list --name month-end --limit 5 --json",
  ],
  async run(context) {
    const stateText = stringOption(context, "state");
    if (stateText !== undefined && !(WORKFLOW_STATES as readonly string[]).includes(stateText)) {
      throw configError(`--state must be one of ${WORKFLOW_STATES.join(", ")}, got ${JSON.stringify(stateText)}`);
    }
    const name = stringOption(context, "name");
    if (name !== undefined) {
      try {
        assertWorkflowName(name);
      } catch (thrown) {
        throw configError(`--name: ${(thrown as Error).message.replace(/^step "[^"]*": /, "")}, got ${JSON.stringify(name)}`);
      }
    }
    const limit = integerValue("--limit", stringOption(context, "limit") ?? "20", 1, MAX_PAGE_SIZE);
    const beforeId = beforeIdOption(stringOption(context, "before-id"), "workflow");
    const { store } = await context.connect();
    const workflows = await store.listWorkflows({
      limit,
      ...(stateText === undefined ? {} : { state: stateText as WorkflowState }),
      ...(name === undefined ? {} : { name }),
      ...(beforeId === undefined ? {} : { beforeId }),
    });
    const nextBeforeId = workflows.length === limit ? workflows[workflows.length - 1]!.id : null;
    if (context.json) {
      context.out.json({ workflows: workflows.map(workflowSummaryJson), nextBeforeId });
      return ExitCode.Ok;
    }
    if (workflows.length === 0) {
      context.out.line(stateText === undefined && name === undefined ? `No workflows in schema "${context.schema}".` : "No workflows match.");
      return ExitCode.Ok;
    }
    const right = "right" as const;
    context.out.line(
      formatTable(
        [
          { title: "id", align: right },
          { title: "name" },
          { title: "state" },
          { title: "done", align: right },
          { title: "steps" },
          { title: "created" },
          { title: "finished" },
        ],
        workflows.map((workflow) => [
          workflow.id,
          truncate(workflow.name, 40),
          workflow.state,
          `${formatCount(workflow.counts.succeeded ?? 0)}/${formatCount(workflow.stepCount)}`,
          stateCounts(workflow.counts),
          formatTime(workflow.createdAt),
          formatTime(workflow.finishedAt),
        ]),
      ),
    );
    if (nextBeforeId !== null) context.out.line(`\nMore: add --before-id ${nextBeforeId} for the next page.`);
    return ExitCode.Ok;
  },
};
