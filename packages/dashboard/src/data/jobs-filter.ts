import { JOB_STATES, type JobState } from "@stint/core";
import { MAX_GROUP_KEY_LENGTH } from "@stint/core/driver";
import { MAX_ERROR_SEARCH_LENGTH } from "@stint/postgres-driver";
import { badParameter } from "../http/request-refused";
import { checkedQueueName } from "./queue-name";

/** The filters of the jobs page, checked. */
export interface JobsFilter {
  readonly queue?: string;
  readonly state?: JobState;
  /** `state=scheduled`: queued jobs whose run_at is still ahead (`state` is then `queued`). */
  readonly scheduled?: boolean;
  readonly errorText?: string;
  /** Only the jobs of this group of the queue (`group` at enqueue). */
  readonly group?: string;
  /** Only the jobs of this serial line of the queue (`serialKey` at enqueue). */
  readonly serialKey?: string;
  readonly createdFrom?: Date;
  readonly createdTo?: Date;
  readonly beforeId?: string;
  /** The cursor of a newer page: jobs with a larger id, oldest of them first read. */
  readonly afterId?: string;
  /** The texts as given, to show in the form again. */
  readonly raw: Readonly<Record<"queue" | "state" | "q" | "group" | "line" | "from" | "to" | "tz", string>>;
}

const LOCAL_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?$/;
/** A `+` in a query string arrives as a space, so ` 02:00` is read as `+02:00`. */
const ZONED_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+ -]\d{2}:\d{2})$/;

/**
 * Reads the jobs page's query: `queue`, `state`, `q` (text in the last
 * error), `group` or `line` (a group or serial key of the queue), `from` and `to` (the time a job was created: ISO 8601 with a
 * zone, or `YYYY-MM-DDTHH:MM` in the zone `tz` names as minutes east of
 * UTC, which the page's script fills in), and `before` or `after` (the
 * cursor of an older or a newer page). Empty fields are no filter. A
 * malformed one is a 400 naming it. The queue may be any name without
 * control characters, so a queue written by SQL that breaks the naming
 * rule is listed all the same (reads are parameterised).
 *
 * @example
 * ```ts
 * parseJobsFilter(new URLSearchParams("state=dead&q=timeout&from=2024-05-01T09:00&tz=120"));
 * // { state: "dead", errorText: "timeout", createdFrom: 2024-05-01T07:00:00.000Z, … }
 * ```
 */
export function parseJobsFilter(query: URLSearchParams): JobsFilter {
  const text = (name: string): string => {
    const values = query.getAll(name);
    if (values.length > 1) throw badParameter(name, "is given more than once");
    return (values[0] ?? "").trim();
  };
  // The queue is kept as given: a name written by SQL may start or end with a space.
  const queueText = text("queue") === "" ? "" : (query.get("queue") ?? "");
  // A key is kept as given too: it may start or end with a space.
  const keyText = (name: string): string => (text(name) === "" ? "" : (query.get(name) ?? ""));
  const raw = {
    queue: queueText,
    state: text("state"),
    q: text("q"),
    group: keyText("group"),
    line: keyText("line"),
    from: text("from"),
    to: text("to"),
    tz: text("tz"),
  };
  const filter: { -readonly [K in keyof JobsFilter]: JobsFilter[K] } = { raw };
  if (raw.queue !== "") {
    filter.queue = checkedQueueName(raw.queue);
  }
  if (raw.state === "scheduled") {
    filter.state = "queued";
    filter.scheduled = true;
  } else if (raw.state !== "") {
    if (!(JOB_STATES as readonly string[]).includes(raw.state)) throw badParameter("state", `must be one of ${JOB_STATES.join(", ")} or scheduled`);
    filter.state = raw.state as JobState;
  }
  if (raw.q !== "") {
    if (raw.q.length > MAX_ERROR_SEARCH_LENGTH) throw badParameter("q", `must be at most ${MAX_ERROR_SEARCH_LENGTH} characters`);
    if (raw.q.includes("\u0000")) throw badParameter("q", "must not contain a NUL character");
    filter.errorText = raw.q;
  }
  if (raw.group !== "" && raw.line !== "") throw badParameter("line", "cannot be given with group: a job has one or the other");
  for (const [name, field] of [
    ["group", "group"],
    ["line", "serialKey"],
  ] as const) {
    const key = raw[name];
    if (key === "") continue;
    if (filter.queue === undefined) throw badParameter(name, "needs a queue: a key names a group within one queue");
    if (key.length > MAX_GROUP_KEY_LENGTH) throw badParameter(name, `must be at most ${MAX_GROUP_KEY_LENGTH} characters`);
    if (key.includes("\u0000")) throw badParameter(name, "must not contain a NUL character");
    filter[field] = key;
  }
  const offsetText = raw.tz;
  if (offsetText !== "" && !/^[+-]?\d{1,4}$/.test(offsetText)) throw badParameter("tz", "must be minutes east of UTC, such as 120 or -300");
  const offsetMinutes = offsetText === "" ? 0 : Number(offsetText);
  if (Math.abs(offsetMinutes) > 14 * 60) throw badParameter("tz", "must be within 14 hours of UTC");
  if (raw.from !== "") filter.createdFrom = parseTime("from", raw.from, offsetMinutes);
  if (raw.to !== "") filter.createdTo = parseTime("to", raw.to, offsetMinutes);
  const before = text("before");
  if (before !== "") filter.beforeId = jobId("before", before);
  const after = text("after");
  if (after !== "") {
    if (before !== "") throw badParameter("after", "cannot be given with before");
    filter.afterId = jobId("after", after);
  }
  return Object.freeze(filter);
}

function parseTime(name: string, value: string, offsetMinutes: number): Date {
  const local = LOCAL_TIME.exec(value);
  let date: Date;
  if (local !== null) {
    const [year, month, day, hour, minute, second] = local.slice(1).map((part) => Number(part ?? 0)) as [number, number, number, number, number, number];
    const wall = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
    const exists = wall.getUTCMonth() === month - 1 && wall.getUTCDate() === day && hour < 24 && minute < 60 && second < 60;
    if (!exists) throw badParameter(name, "is not a date and time that exists");
    date = new Date(wall.getTime() - offsetMinutes * 60_000);
  } else if (ZONED_TIME.test(value)) {
    date = new Date(value.replace(" ", "+"));
  } else {
    throw badParameter(name, "must be a time such as 2024-05-01T09:30 or 2024-05-01T09:30:00Z");
  }
  if (!Number.isFinite(date.getTime()) || date.getUTCFullYear() < 1970 || date.getUTCFullYear() > 9999) {
    throw badParameter(name, "is not a time the dashboard can search for");
  }
  return date;
}

function jobId(name: string, text: string): string {
  if (!/^[1-9][0-9]{0,18}$/.test(text) || BigInt(text) > 9_223_372_036_854_775_807n) throw badParameter(name, "must be a job id");
  return text;
}
