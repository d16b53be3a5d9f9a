import type { QueueControls } from "@stint/core";
import type { RecentThroughput } from "@stint/postgres-driver";
import type { DashboardSources } from "./dashboard-sources";

/** The window of the "succeeded" column and the throughput chart. */
export const THROUGHPUT_WINDOW_MS = 60 * 60_000;
/** Buckets of the chart: five minutes each. */
export const THROUGHPUT_BUCKETS = 12;
/** How many succeeded jobs the throughput reads at most, an equal share per bucket (see `readRecentThroughput`). */
export const THROUGHPUT_SCAN_LIMIT = 50_000;
/** How many succeeded jobs each five-minute bucket reads at most: beyond, the figures are lower bounds. */
export const THROUGHPUT_BUCKET_SHARE = Math.ceil(THROUGHPUT_SCAN_LIMIT / THROUGHPUT_BUCKETS);
/**
 * How long the process reuses the throughput it read, for every open tab
 * and refresh alike: a chart of an hour in five-minute buckets is not made
 * wrong by a few seconds, and its read is the only one of the overview that
 * grows with the load (up to {@link THROUGHPUT_SCAN_LIMIT} rows).
 */
export const THROUGHPUT_CACHE_MS = 5_000;
/**
 * How old a throughput the overview still answers with while a newer read
 * runs in the background: within it, no request waits for the throughput
 * read (the one read of the overview that grows with the load), only the
 * first after the process starts or after this long without a visit.
 */
export const THROUGHPUT_STALE_MS = 60_000;

/** The throughput of one browser: the last read that succeeded, and the read under way. */
interface CachedThroughput {
  latest?: { readonly value: RecentThroughput; readonly at: number };
  pending?: { readonly read: Promise<RecentThroughput>; readonly at: number };
}

/** The throughput each browser last read, shared by every request of the process (a browser is one database and schema). */
const throughputCache = new WeakMap<DashboardSources["browser"], CachedThroughput>();

/** One row of the overview. */
export interface QueueRow {
  readonly queue: string;
  readonly queued: number;
  readonly due: number;
  readonly running: number;
  /** `failed`: an attempt failed and a retry is scheduled. */
  readonly retrying: number;
  readonly dead: number;
  readonly succeededLastHour: number;
  /** Succeeded jobs per five minutes over the last hour, oldest first. */
  readonly buckets: readonly number[];
  readonly oldestDueAgeMs: number | null;
  readonly controls: QueueControls | undefined;
}

/** What the overview shows. */
export interface Overview {
  readonly queues: readonly QueueRow[];
  readonly throughput: Omit<RecentThroughput, "queues">;
}

/**
 * Reads the overview in three bounded statements, side by side: the
 * gauges a metrics scrape reads (waiting, running and dead jobs through
 * their partial indexes, never the succeeded history), the queues'
 * controls, and the jobs that succeeded in the last hour (read from the
 * history by finishing time, at most {@link THROUGHPUT_BUCKET_SHARE} per
 * five minutes). A queue shows when it has jobs waiting, running or dead,
 * succeeded within the hour, or controls set.
 *
 * The gauges and controls are read on every call (index-only reads of the
 * waiting, running and dead jobs, so an action shows at once); the
 * throughput is read at most once per {@link THROUGHPUT_CACHE_MS} per
 * process, however many tabs refresh, and concurrent calls share one read.
 * Once that is older, a call answers with it while one read refreshes it in
 * the background (up to {@link THROUGHPUT_STALE_MS}), so only the first
 * call of a process waits for it. `throughputMaxAgeMs: 0` reads it afresh;
 * `now` is the clock (tests).
 *
 * @example
 * ```ts
 * const overview = await readOverview(sources);
 * for (const row of overview.queues) console.log(row.queue, row.queued, row.dead, row.succeededLastHour);
 * ```
 */
export async function readOverview(
  sources: DashboardSources,
  options: { readonly throughputMaxAgeMs?: number; readonly now?: () => number } = {},
): Promise<Overview> {
  const [gauges, controls, throughput] = await Promise.all([
    sources.browser.readQueueGauges(),
    sources.store.listQueueControls(),
    recentThroughput(sources.browser, options.throughputMaxAgeMs ?? THROUGHPUT_CACHE_MS, (options.now ?? Date.now)()),
  ]);
  const gaugesByQueue = new Map(gauges.map((entry) => [entry.queue, entry]));
  const controlsByQueue = new Map(controls.map((entry) => [entry.queue, entry]));
  const throughputByQueue = new Map(throughput.queues.map((entry) => [entry.queue, entry]));
  const names = [...new Set([...gaugesByQueue.keys(), ...controlsByQueue.keys(), ...throughputByQueue.keys()])].sort();
  const { queues: _queues, ...window } = throughput;
  return Object.freeze({
    throughput: window,
    queues: names.map((queue) => {
      const gauge = gaugesByQueue.get(queue);
      const recent = throughputByQueue.get(queue);
      return Object.freeze({
        queue,
        queued: gauge?.queued ?? 0,
        due: gauge?.due ?? 0,
        running: gauge?.running ?? 0,
        retrying: gauge?.failed ?? 0,
        dead: gauge?.dead ?? 0,
        succeededLastHour: recent?.succeeded ?? 0,
        buckets: recent?.buckets ?? new Array<number>(THROUGHPUT_BUCKETS).fill(0),
        oldestDueAgeMs: gauge?.oldestDueAgeMs ?? null,
        controls: controlsByQueue.get(queue),
      });
    }),
  });
}

function recentThroughput(browser: DashboardSources["browser"], maxAgeMs: number, now: number): Promise<RecentThroughput> {
  let entry = throughputCache.get(browser);
  if (entry === undefined) {
    entry = {};
    throughputCache.set(browser, entry);
  }
  const { latest } = entry;
  if (latest !== undefined && now - latest.at < maxAgeMs) return Promise.resolve(latest.value);
  const pending = entry.pending ?? startRead(browser, entry, now);
  // Older than maxAgeMs but recent enough: answer with it now; the read under way refreshes it for the next request.
  if (latest !== undefined && maxAgeMs > 0 && now - latest.at < THROUGHPUT_STALE_MS) return Promise.resolve(latest.value);
  return pending.read;
}

function startRead(browser: DashboardSources["browser"], entry: CachedThroughput, now: number): NonNullable<CachedThroughput["pending"]> {
  const read = browser.readRecentThroughput({ windowMs: THROUGHPUT_WINDOW_MS, buckets: THROUGHPUT_BUCKETS, scanLimit: THROUGHPUT_SCAN_LIMIT });
  const pending = { read, at: now };
  entry.pending = pending;
  // Handles the rejection too, so a background read that fails is no unhandled rejection; the next request tries again.
  read.then(
    (value) => {
      if (entry.pending === pending) entry.pending = undefined;
      if (entry.latest === undefined || entry.latest.at <= now) entry.latest = { value, at: now };
    },
    () => {
      if (entry.pending === pending) entry.pending = undefined;
    },
  );
  return pending;
}
