import { ExitCode } from "@stint/core";
import { workflowIdArgument, workflowNotFound } from "../args/workflow-id";
import { flagOption, type Command } from "../command";
import { formatTable } from "../output/table";
import { formatTime } from "../output/time-text";
import { workflowJson } from "../output/workflow-json";
import { stateCounts, stepCells, stepLayers, stepRows, SUMMARY_THRESHOLD } from "../output/workflow-steps";

/**
 * `stint workflows show <id>`: a workflow's state and its steps in layers
 * (a step's layer is one more than the deepest step it waits for), one row
 * per step with its job, queue, state, attempts, times, what it waits for
 * and its last error's first line. A list of more than
 * `SUMMARY_THRESHOLD` same-named steps in a layer is one row with its
 * states counted, unless `--all`. `--json` prints every step, with its
 * layer. Exit 3 when there is no such workflow.
 */
export const workflowsShowCommand: Command = {
  name: "workflows show",
  summary: "Show a workflow's steps in layers: state, attempts, times, what each waits for",
  usage: ["workflows show <id> [--all] [--json]"],
  args: { min: 1, max: 1 },
  json: true,
  options: {
    all: { type: "boolean", description: `one row per step, even in a list of more than ${SUMMARY_THRESHOLD} same-named steps` },
  },
  notes: [
    "Layer 0 holds the steps that wait for nothing; a step is one layer below the deepest step it waits for.",
    `More than ${SUMMARY_THRESHOLD} steps of one name in a layer (a fan-out) share a row: their job ids (first..last),`,
    "states counted, earliest start, latest finish, longest duration, and the first of their errors (--all lists each).",
    "A blocked step waits for the steps in its `waits for` column; `stint jobs show <job>` shows one step in full.",
    "",
    "Examples:",
    "  stint workflows show 41",
    "  stint workflows show 41 --all --json",
  ],
  async run(context) {
    const id = workflowIdArgument(context.positionals[0]!);
    const { store } = await context.connect();
    const workflow = await store.getWorkflow({ id });
    if (workflow === undefined) throw workflowNotFound(id, context.schema);
    const layers = stepLayers(workflow.steps);
    if (context.json) {
      context.out.json(workflowJson(workflow, layers));
      return ExitCode.Ok;
    }
    const fields: [string, string][] = [
      ["id", workflow.id],
      ["name", workflow.name],
      ["state", workflow.state],
      ["steps", `${workflow.stepCount}: ${stateCounts(workflow.counts)}`],
      ["created at", formatTime(workflow.createdAt)],
      ["finished at", formatTime(workflow.finishedAt)],
      ...(workflow.cancelledAt === null ? [] : [["cancelled at", formatTime(workflow.cancelledAt)] as [string, string]]),
    ];
    const width = Math.max(...fields.map(([name]) => name.length));
    for (const [name, value] of fields) context.out.line(`${name.padEnd(width)}  ${value}`);
    context.out.line("");
    const names = new Map(workflow.steps.map((step) => [step.jobId, step.step]));
    const rows = stepRows(workflow.steps, layers, flagOption(context, "all"));
    const right = "right" as const;
    context.out.line(
      formatTable(
        [
          { title: "layer", align: right },
          { title: "step" },
          { title: "job", align: right },
          { title: "queue" },
          { title: "state" },
          { title: "attempts", align: right },
          { title: "started" },
          { title: "finished" },
          { title: "duration", align: right },
          { title: "waits for" },
          { title: "last error" },
        ],
        rows.map((row) => stepCells(row, names)),
      ),
    );
    if (rows.length < workflow.steps.length) context.out.line("\nLists of same-named steps are summarised; --all shows one row per step.");
    return ExitCode.Ok;
  },
};
