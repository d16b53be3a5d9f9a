import { GROUP_WAITING_COUNT_CAP } from "../../limits";
import type { GroupSummary, ListGroupsParams } from "../../store/store-params";
import { isWaiting } from "./memory-rows";
import type { MemoryState } from "./memory-state";

interface Tally {
  queue: string;
  key: string;
  serial: boolean;
  running: number;
  waiting: number;
  heldBy: string | null;
}

/**
 * The busiest groups and lines of each queue, from the rows: as
 * `JobStore.listGroups` (most running, then most waiting, then held lines,
 * then by key; waiting counted up to `GROUP_WAITING_COUNT_CAP`).
 */
export function listGroups(state: MemoryState, params: ListGroupsParams): readonly GroupSummary[] {
  const asked = params.queues === undefined ? undefined : new Set(params.queues);
  const runningOnly = params.runningOnly === true;
  const tallies = new Map<string, Tally>();
  const tallyOf = (queue: string, key: string, serial: boolean): Tally => {
    const id = `${queue}\u0000${key}`;
    let tally = tallies.get(id);
    if (tally === undefined) tallies.set(id, (tally = { queue, key, serial, running: 0, waiting: 0, heldBy: null }));
    return tally;
  };
  for (const row of state.jobs.values()) {
    if (row.groupKey === "" || (asked !== undefined && !asked.has(row.queue))) continue;
    if (row.state === "running") tallyOf(row.queue, row.groupKey, row.serial !== null).running += 1;
    else if (!runningOnly && isWaiting(row.state)) {
      const tally = tallyOf(row.queue, row.groupKey, row.serial !== null);
      tally.waiting = Math.min(tally.waiting + 1, GROUP_WAITING_COUNT_CAP);
    }
  }
  for (const [id, jobId] of state.heldLines) {
    const split = id.indexOf("\u0000");
    const queue = id.slice(0, split);
    if (asked !== undefined && !asked.has(queue)) continue;
    const tally = runningOnly ? tallies.get(id) : tallyOf(queue, id.slice(split + 1), true);
    if (tally !== undefined) tally.heldBy = jobId;
  }
  const perQueue = new Map<string, number>();
  const listed: GroupSummary[] = [];
  for (const tally of [...tallies.values()].sort(busiestFirst)) {
    const count = perQueue.get(tally.queue) ?? 0;
    if (count >= params.limit) continue;
    perQueue.set(tally.queue, count + 1);
    listed.push(Object.freeze({ ...tally, waiting: runningOnly ? null : tally.waiting }));
  }
  return Object.freeze(listed);
}

/** By queue, then most running, most waiting, held lines first, then by key (code unit order, as PostgreSQL's `C` collation). */
function busiestFirst(a: Tally, b: Tally): number {
  return (
    compareText(a.queue, b.queue) ||
    b.running - a.running ||
    b.waiting - a.waiting ||
    Number(b.heldBy !== null) - Number(a.heldBy !== null) ||
    compareText(a.key, b.key)
  );
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
