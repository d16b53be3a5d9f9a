import { ConfigError } from "../../errors/config-errors";
import type { NewJob } from "../../store/job-store";
import type { LineParams } from "../../store/store-params";
import { inClaimOrder, isWaiting, type MemoryJobRow } from "./memory-rows";
import { keyOf, type GroupTurn, type MemoryState } from "./memory-state";

/*
 * Groups and serial lines, as the PostgreSQL store keeps them (its `job_groups`
 * table, the `enter_job_group` trigger and `claim_group_turns`): a queue's
 * first group makes its claims go round its groups in key order, the jobs
 * without a group taking one turn together (key `""`, first in the round).
 */

/**
 * Inserts a job and, when it has a group or a serial key, makes that key
 * one of its queue's groups (as the trigger `enter_job_group` does).
 */
export function insertJob(state: MemoryState, row: MemoryJobRow): void {
  state.insert(row);
  enterGroup(state, row);
}

/**
 * Makes a waiting job's group or line one of its queue's groups when it is
 * not. The queue's first group also adds the turn of its jobs without a
 * group (`""`), which is never removed.
 */
export function enterGroup(state: MemoryState, row: MemoryJobRow): void {
  if (row.groupKey === "" || !isWaiting(row.state)) return;
  let turns = state.groupTurns.get(row.queue);
  if (turns === undefined) {
    turns = new Map<string, GroupTurn>([["", { serial: false }]]);
    state.groupTurns.set(row.queue, turns);
  }
  if (!turns.has(row.groupKey)) turns.set(row.groupKey, { serial: row.serial !== null });
}

/**
 * Refuses, before anything is written, jobs whose key is a group and a
 * serial key at once in one queue: with a key that has a turn of the other
 * kind now, or that an earlier job of `jobs` uses the other way. The error
 * is the `ConfigError` the PostgreSQL store raises (SQLSTATE 22023 there).
 */
export function checkGroupKeys(state: MemoryState, jobs: readonly Pick<NewJob, "queue" | "groupKey" | "serial">[]): void {
  const seen = new Map<string, boolean>();
  for (const job of jobs) {
    const key = job.groupKey ?? "";
    if (key === "") continue;
    const serial = job.serial !== undefined && job.serial !== null;
    const known = seen.get(keyOf(job.queue, key)) ?? state.groupTurns.get(job.queue)?.get(key)?.serial;
    if (known !== undefined && known !== serial) throw groupKeyConflict(job.queue, key, known);
    seen.set(keyOf(job.queue, key), serial);
  }
}

/** The error of a key used both ways, worded as the PostgreSQL store's (which names the key and the queue as `quote_literal` does). */
function groupKeyConflict(queue: string, key: string, keyIsSerial: boolean): ConfigError {
  const [is, asUsed] = keyIsSerial ? ["a serial key", "a group"] : ["a group", "a serial key"];
  return new ConfigError(
    keyIsSerial ? "group" : "serialKey",
    `key ${quoteLiteral(key)} of queue ${quoteLiteral(queue)} is ${is}; a job cannot use it as ${asUsed}`,
  );
}

/** Text as PostgreSQL's `quote_literal` writes it. */
function quoteLiteral(text: string): string {
  const quoted = `'${text.replace(/'/g, "''").replace(/\\/g, "\\\\")}'`;
  return text.includes("\\") ? `E${quoted}` : quoted;
}

/** A serial job that died holds its line when the line holds on death (`serial: "hold"`), until it is retried or the line released. */
export function holdLine(state: MemoryState, row: MemoryJobRow): void {
  if (row.serial !== "hold") return;
  state.heldLines.set(keyOf(row.queue, row.groupKey), row.id);
  enterLine(state, row);
}

/** A held line keeps its turn (created again if a claim had removed it), so that no key of the other kind takes it. */
function enterLine(state: MemoryState, row: MemoryJobRow): void {
  const turns = state.groupTurns.get(row.queue);
  if (turns !== undefined && !turns.has(row.groupKey)) turns.set(row.groupKey, { serial: true });
}

/** A job back to waiting (retried): its group or line has a turn again, and a line it held goes on (it is the line's head again). */
export function reenterGroup(state: MemoryState, row: MemoryJobRow): void {
  enterGroup(state, row);
  const line = keyOf(row.queue, row.groupKey);
  if (state.heldLines.get(line) === row.id) state.heldLines.delete(line);
}

/** Lets a serial line that a dead job holds go on: as `JobStore.releaseLine`; true when it was held. */
export function releaseLine(state: MemoryState, params: LineParams): boolean {
  return state.heldLines.delete(keyOf(params.queue, params.key));
}

/** Whether `queue` takes turns among groups (it has had a group or a serial line). */
export function isGrouped(state: MemoryState, queue: string): boolean {
  return state.groupTurns.has(queue);
}

/** One turn a claim serves: its key, whether it is a line, and how many jobs it may take. */
interface Turn {
  readonly key: string;
  readonly serial: boolean;
  readonly room: number;
}

/**
 * The due jobs a claim of a grouped queue takes, up to `wanted`, as
 * `claim_group_turns` shares them out:
 *
 * 1. it looks at up to `2 × wanted + 4` groups in key order, starting after
 *    the store's place in the queue (the last group its previous claim
 *    reached) and wrapping round;
 * 2. each may take its due jobs within the queue's `maxRunningPerGroup`
 *    (jobs without a group have no cap); a serial line, its head (lowest id
 *    of its waiting jobs) when nothing of it runs, no dead job holds it and
 *    the head is due: a head waiting for a retry holds the line;
 * 3. it serves the first `wanted` groups that can take something, passing
 *    over the others: an even share each, and what some leave over to
 *    those that have more, in turn order; the last group it serves (or,
 *    serving none, the last it looked at) is the store's new place;
 * 4. a group it looked at with nothing waiting (not `""`, nor a held line)
 *    is dropped until its next job.
 *
 * Within a group, jobs come in claim order; `fits` is the claim's filter
 * (timeouts, start-by deadlines, follow-ups), which the shares do not see.
 * Keys are ordered by UTF-16 code units; PostgreSQL orders them by the
 * database's collation, which agrees for lowercase ASCII keys.
 */
export function dueByTurns(state: MemoryState, queue: string, wanted: number, now: number, fits: (row: MemoryJobRow) => boolean): MemoryJobRow[] {
  const groups = state.groupTurns.get(queue);
  if (groups === undefined || wanted <= 0) return [];
  const keys = inTurnOrder([...groups.keys()], state.groupPlaces.get(queue), wanted * 2 + 4);
  if (keys.length === 0) return [];
  const rows = [...state.rowsOf(queue)];
  const cap = state.queues.get(queue)?.maxRunningPerGroup ?? null;
  const fair = Math.ceil(wanted / Math.min(wanted, keys.length));
  const rooms = keys.map((key): Turn => {
    const serial = groups.get(key)!.serial;
    const waiting = rows.filter((row) => row.groupKey === key && isWaiting(row.state));
    const due = serial ? waiting.length : waiting.filter((row) => row.runAt <= now).length;
    const running = key === "" ? 0 : rows.filter((row) => row.groupKey === key && row.state === "running").length;
    const held = state.heldLines.has(keyOf(queue, key));
    if (waiting.length === 0 && key !== "" && !held) groups.delete(key);
    if (serial) return { key, serial, room: !held && running === 0 && due > 0 ? 1 : 0 };
    const capRoom = key === "" || cap === null ? Infinity : Math.max(cap - running, 0);
    // More than a share counts as "as many as the cap allows", as the PostgreSQL store counts due jobs only up to fair + 1.
    return { key, serial, room: Math.min(due > fair ? wanted : due, capRoom) };
  });
  const servable = rooms.flatMap((turn, n) => (turn.room > 0 ? [n] : []));
  const last = servable.length >= wanted ? servable[wanted - 1]! + 1 : rooms.length;
  state.groupPlaces.set(queue, keys[last - 1]!);
  if (servable.length === 0) return [];
  const served = Math.min(servable.length, wanted);
  return shareOut(rooms.slice(0, last), wanted, Math.ceil(wanted / served)).flatMap(({ key, serial, room: take }) => {
    if (take === 0) return [];
    const waiting = rows.filter((row) => row.groupKey === key && isWaiting(row.state));
    if (serial) {
      const head = waiting.reduce<MemoryJobRow | undefined>((lowest, row) => (lowest === undefined || row.seq < lowest.seq ? row : lowest), undefined);
      return head !== undefined && head.runAt <= now && fits(head) ? [head] : [];
    }
    return waiting
      .filter((row) => row.runAt <= now && fits(row))
      .sort(inClaimOrder)
      .slice(0, take);
  });
}

/** Up to `reach` of `keys` in key order, starting after `place` (from the first when there is none) and wrapping round once. */
function inTurnOrder(keys: string[], place: string | undefined, reach: number): string[] {
  const sorted = keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (place === undefined) return sorted.slice(0, reach);
  return [...sorted.filter((key) => key > place), ...sorted.filter((key) => key <= place)].slice(0, reach);
}

/** An even share of `wanted` each, cut to each turn's room; what is left over to the turns that have more, in turn order. */
function shareOut(turns: readonly Turn[], wanted: number, fair: number): Turn[] {
  let slack = wanted;
  const takes = turns.map((turn) => {
    const take = Math.min(turn.room, fair, slack);
    slack -= take;
    return take;
  });
  const saturated = turns.filter((turn, n) => turn.room > takes[n]!).length;
  if (slack > 0 && saturated > 0) {
    const extra = Math.ceil(slack / saturated);
    turns.forEach((turn, n) => {
      const give = Math.min(extra, turn.room - takes[n]!, slack);
      if (give <= 0) return;
      takes[n] = takes[n]! + give;
      slack -= give;
    });
  }
  return turns.map((turn, n) => ({ ...turn, room: takes[n]! }));
}
