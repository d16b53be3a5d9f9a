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

interface CachedThroughput {
  readonly read: Promise<RecentThroughput>;
  readonly at: number;
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
 * `throughputMaxAgeMs: 0` reads it afresh.
 *
 * @example
 * ```ts
 * const overview = await readOverview(sources);
 * for (const row of overview.queues) console.log(row.queue, row.queued, row.dead, row.succeededLastHour);
 * ```
 */
export async function readOverview(sources: DashboardSources, options: { readonly throughputMaxAgeMs?: number } = {}): Promise<Overview> {
  const [gauges, controls, throughput] = await Promise.all([
    sources.browser.readQueueGauges(),
    sources.store.listQueueControls(),
    recentThroughput(sources.browser, options.throughputMaxAgeMs ?? THROUGHPUT_CACHE_MS),
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

function recentThroughput(browser: DashboardSources["browser"], maxAgeMs: number): Promise<RecentThroughput> {
  const now = Date.now();
  const cached = throughputCache.get(browser);
  if (cached !== undefined && now - cached.at < maxAgeMs) return cached.read;
  const read = browser.readRecentThroughput({ windowMs: THROUGHPUT_WINDOW_MS, buckets: THROUGHPUT_BUCKETS, scanLimit: THROUGHPUT_SCAN_LIMIT });
  const entry = { read, at: now };
  throughputCache.set(browser, entry);
  read.catch(() => {
    if (throughputCache.get(browser) === entry) throughputCache.delete(browser);
  });
  return read;
}
