import type { JobState, WorkflowStepRecord } from "@stint/core";
import { formatCount } from "../html/format";
import { html, type Html } from "../html/html";
import { href, type PageContext } from "./page-context";

/** More same-named steps than this in one layer are drawn as one node with their states counted. */
export const COLLAPSE_OVER = 5;
/** The most nodes a layer draws; the rest share one node, so a layer of many differently named steps stays legible. */
export const MAX_NODES_PER_LAYER = 40;

const NODE_WIDTH = 184;
const NODE_HEIGHT = 46;
const GAP_X = 18;
const GAP_Y = 54;
const PAD = 6;
const NAME_CHARS = 24;

/** The order in which a collapsed node takes its colour: the state an operator most needs to see among its steps. */
const SHOWN_FIRST: readonly JobState[] = ["dead", "cancelled", "failed", "running", "queued", "blocked", "succeeded"];

/** One box of the graph: a step, or several steps of one layer (a list of one name, or the rest of a crowded layer). */
export interface GraphNode {
  /** Unique within the graph; the anchor of its row in the steps table. */
  readonly key: string;
  readonly layer: number;
  /** The step name, or `null` for the node holding the rest of a crowded layer. */
  readonly name: string | null;
  readonly steps: readonly WorkflowStepRecord[];
  /** The colour of the box: its step's state, or the first of {@link SHOWN_FIRST} among its steps. */
  readonly state: JobState;
  readonly x: number;
  readonly y: number;
}

/** A line from a node to a node that waits for it, standing for `count` dependencies between their steps. */
export interface GraphEdge {
  readonly from: GraphNode;
  readonly to: GraphNode;
  readonly count: number;
}

/** The laid-out graph of a workflow's steps. */
export interface WorkflowGraph {
  readonly nodes: readonly GraphNode[];
  readonly edges: readonly GraphEdge[];
  readonly width: number;
  readonly height: number;
}

/**
 * Lays a workflow's steps out in layers from the top: a step's layer is
 * the longest path to it from a step that waits for nothing. Within a
 * layer, more than {@link COLLAPSE_OVER} steps of one name become one
 * node, and a layer keeps at most {@link MAX_NODES_PER_LAYER} nodes; the
 * nodes of a layer are ordered by where the nodes they wait for stand
 * (fewer crossing lines). Linear in steps plus dependencies, so a fan-out
 * of thousands is a few nodes and lines.
 *
 * @example
 * ```ts
 * const graph = layoutWorkflow(workflow.steps); // 1 + 1,000 + 1 steps: three nodes, two lines
 * ```
 */
export function layoutWorkflow(steps: readonly WorkflowStepRecord[]): WorkflowGraph {
  const layers = longestPathLayers(steps);
  const position = new Map(steps.map((step, index) => [step.jobId, index]));
  const nodeOf: GraphNode[] = new Array<GraphNode>(steps.length);
  const order = new Map<GraphNode, number>();
  const rows: GraphNode[][] = [];
  const depth = Math.max(0, ...layers) + 1;
  for (let layer = 0; layer < depth; layer += 1) {
    const members = steps.map((_, index) => index).filter((index) => layers[index] === layer);
    const byName = new Map<string, number[]>();
    for (const index of members) {
      const named = byName.get(steps[index]!.step);
      if (named === undefined) byName.set(steps[index]!.step, [index]);
      else named.push(index);
    }
    let groups = [...byName.values()].flatMap((indexes) => (indexes.length > COLLAPSE_OVER ? [indexes] : indexes.map((index) => [index])));
    const weight = (indexes: number[]): number => {
      const parents = indexes.flatMap((index) => steps[index]!.after.flatMap((id) => (position.has(id) ? [order.get(nodeOf[position.get(id)!]!) ?? 0] : [])));
      return parents.length === 0 ? indexes[0]! : parents.reduce((sum, value) => sum + value, 0) / parents.length;
    };
    const weights = new Map(groups.map((indexes) => [indexes, weight(indexes)]));
    groups.sort((a, b) => weights.get(a)! - weights.get(b)! || a[0]! - b[0]!);
    if (groups.length > MAX_NODES_PER_LAYER) groups = [...groups.slice(0, MAX_NODES_PER_LAYER - 1), groups.slice(MAX_NODES_PER_LAYER - 1).flat()];
    const row = groups.map((indexes, slot): GraphNode => {
      const members = indexes.map((index) => steps[index]!);
      const named = new Set(members.map((step) => step.step)).size === 1;
      // Not frozen yet: its x is set once the widest layer is known.
      return {
        key: `l${layer}-${slot}`,
        layer,
        name: named ? members[0]!.step : null,
        steps: members,
        state: SHOWN_FIRST.find((state) => members.some((step) => step.state === state)) ?? members[0]!.state,
        x: 0,
        y: PAD + layer * (NODE_HEIGHT + GAP_Y),
      };
    });
    row.forEach((node, slot) => {
      order.set(node, slot);
      for (const step of node.steps) nodeOf[position.get(step.jobId)!] = node;
    });
    rows.push(row);
  }
  const widest = Math.max(1, ...rows.map((row) => row.length));
  const width = PAD * 2 + widest * NODE_WIDTH + (widest - 1) * GAP_X;
  // Centre each layer under the widest one.
  const nodes = rows.flatMap((row) => {
    const start = (width - (row.length * NODE_WIDTH + (row.length - 1) * GAP_X)) / 2;
    return row.map((node, slot) => Object.freeze(Object.assign(node, { x: Math.round(start + slot * (NODE_WIDTH + GAP_X)) })));
  });
  return Object.freeze({ nodes, edges: edgesBetween(steps, nodeOf, position), width, height: PAD * 2 + depth * NODE_HEIGHT + (depth - 1) * GAP_Y });
}

/** Each step's layer, by Kahn's order: one more than the deepest step it waits for (a cycle, which stores refuse, stays where it got to). */
function longestPathLayers(steps: readonly WorkflowStepRecord[]): number[] {
  const position = new Map(steps.map((step, index) => [step.jobId, index]));
  const waiting = steps.map((step) => step.after.filter((id) => position.has(id)).length);
  const dependents = steps.map((): number[] => []);
  steps.forEach((step, index) => step.after.forEach((id) => position.has(id) && dependents[position.get(id)!]!.push(index)));
  const layers = new Array<number>(steps.length).fill(0);
  const ready = waiting.flatMap((count, index) => (count === 0 ? [index] : []));
  for (let next = ready.pop(); next !== undefined; next = ready.pop()) {
    for (const dependent of dependents[next]!) {
      layers[dependent] = Math.max(layers[dependent]!, layers[next]! + 1);
      if ((waiting[dependent]! -= 1) === 0) ready.push(dependent);
    }
  }
  return layers;
}

/** One line per pair of nodes with dependencies between their steps, counting them. */
function edgesBetween(steps: readonly WorkflowStepRecord[], nodeOf: readonly GraphNode[], position: ReadonlyMap<string, number>): GraphEdge[] {
  const edges = new Map<GraphNode, Map<GraphNode, number>>();
  steps.forEach((step, index) => {
    const to = nodeOf[index]!;
    for (const id of step.after) {
      const at = position.get(id);
      if (at === undefined) continue;
      const from = nodeOf[at]!;
      const targets = edges.get(from) ?? new Map<GraphNode, number>();
      targets.set(to, (targets.get(to) ?? 0) + 1);
      edges.set(from, targets);
    }
  });
  return [...edges].flatMap(([from, targets]) => [...targets].map(([to, count]) => Object.freeze({ from, to, count })));
}

/**
 * The graph as inline SVG: a box per node, coloured by state, linking to
 * its step's job page (a node of several steps links to its row in the
 * steps table), and a line from each node to each node waiting for it.
 * Every text is escaped by {@link html}; coordinates are numbers.
 */
export function workflowGraphSvg(context: Pick<PageContext, "prefix">, graph: WorkflowGraph, label: string): Html {
  const line = (edge: GraphEdge) =>
    html`<line x1="${edge.from.x + NODE_WIDTH / 2}" y1="${edge.from.y + NODE_HEIGHT}" x2="${edge.to.x + NODE_WIDTH / 2}" y2="${edge.to.y}" data-edge="${edge.from.key} ${edge.to.key}"><title>${
      edge.count === 1 ? "1 dependency" : `${formatCount(edge.count)} dependencies`
    }</title></line>`;
  return html`<div class="wf-graph-wrap"><svg class="wf-graph" xmlns="http://www.w3.org/2000/svg" width="${graph.width}" height="${graph.height}" viewBox="0 0 ${graph.width} ${graph.height}" role="img" aria-label="${label}">
<g class="wf-edges">${graph.edges.map(line)}</g>
<g class="wf-nodes">${graph.nodes.map((node) => nodeBox(context, node))}</g>
</svg></div>`;
}

function nodeBox(context: Pick<PageContext, "prefix">, node: GraphNode): Html {
  const single = node.steps.length === 1 ? node.steps[0]! : undefined;
  const name = node.name ?? `${formatCount(node.steps.length)} more steps`;
  const title = single === undefined ? `${name}: ${countsText(node.steps)}` : `${single.step}: ${single.state}, job ${single.jobId}`;
  const link = single === undefined ? `#steps-${node.key}` : href(context, `/jobs/${single.jobId}`);
  const shown = node.name !== null && node.steps.length > 1 ? `${name} ×${formatCount(node.steps.length)}` : name;
  const sub = single === undefined ? countsText(node.steps, 2) : `${single.state} · job ${single.jobId}`;
  return html`<a href="${link}" class="wf-node state-${node.state}" data-node="${node.key}" data-steps="${node.steps.length}"><title>${title}</title>
<rect x="${node.x}" y="${node.y}" width="${NODE_WIDTH}" height="${NODE_HEIGHT}" rx="6"></rect>
<text x="${node.x + 10}" y="${node.y + 19}" class="wf-name">${cut(shown, NAME_CHARS)}</text>
<text x="${node.x + 10}" y="${node.y + 36}" class="wf-sub">${cut(sub, NAME_CHARS + 6)}</text></a>`;
}

/**
 * Steps counted by state, most first: `"990 succeeded · 10 dead"`; with
 * `most`, only that many states and `…` after.
 */
export function countsText(steps: readonly Pick<WorkflowStepRecord, "state">[], most = Number.POSITIVE_INFINITY): string {
  const counts = new Map<JobState, number>();
  for (const step of steps) counts.set(step.state, (counts.get(step.state) ?? 0) + 1);
  const sorted = [...counts].sort((a, b) => b[1] - a[1]);
  const parts = sorted.slice(0, most).map(([state, count]) => `${formatCount(count)} ${state}`);
  return `${parts.join(" · ")}${sorted.length > most ? " …" : ""}`;
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
