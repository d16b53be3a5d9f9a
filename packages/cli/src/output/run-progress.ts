import type { JobStore } from "@stint/core";
import type { OutputStream } from "../io";
import { startProgress } from "./progress";
import { formatCount } from "./table";

/** Options of {@link startRunProgress}. */
export interface RunProgressOptions {
  /** The queues the run works. */
  readonly queues: readonly string[];
  /** Where the counts are read (the CLI's own connection, not the workers' pool). */
  readonly store: Pick<JobStore, "countByQueue">;
  /** Where the line is drawn: stderr. Nothing is shown unless it is a terminal. */
  readonly stream: OutputStream;
  /** Least time between two counts. Default 1 000 ms. */
  readonly intervalMs?: number;
  /** The clock for the rate (tests). Default `Date.now`. */
  readonly now?: () => number;
}

/** A progress line being drawn; {@link RunProgress.stop} draws the last counts and ends it. */
export interface RunProgress {
  stop(): Promise<void>;
}

/** What one count says, summed over the queues. */
interface Snapshot {
  readonly succeeded: number;
  readonly dead: number;
  /** Due (queued, or failed with its retry time passed) or running. */
  readonly remaining: number;
}

/**
 * Draws the progress of `stint run --once` on a terminal, in place and below
 * the workers' log lines:
 * `run send-invoice: 1,200/2,400 jobs done (50%), 3 failed, 1,197 remaining, 240/s`.
 * Returns `undefined` (and reads nothing) when the stream is not a terminal,
 * so CronJob logs stay clean.
 *
 * The counts come from the database (`countByQueue`, the query of `stint
 * status`), compared with a first count taken at the start: done is jobs
 * that succeeded since, failed is jobs that died since, remaining is what is
 * due or running now. Reading the table rather than the workers' counters
 * needs no hook in the worker and shows the queues' real progress, whichever
 * process does the work. The count scans the queues' rows, so it runs at
 * most once a second and never more often than ten times its own duration:
 * on a large table it slows down instead of loading the database.
 *
 * @example
 * ```ts
 * const progress = await startRunProgress({ queues: ["send-invoice"], store, stream: io.stderr });
 * try { await runFromContainer(container, options); } finally { await progress?.stop(); }
 * ```
 */
export async function startRunProgress(options: RunProgressOptions): Promise<RunProgress | undefined> {
  if (options.stream.isTTY !== true) return undefined;
  const now = options.now ?? Date.now;
  const intervalMs = options.intervalMs ?? 1_000;
  const count = async (): Promise<{ snapshot: Snapshot; tookMs: number }> => {
    const started = now();
    const rows = await options.store.countByQueue({ queues: options.queues });
    const sum = (pick: (row: (typeof rows)[number]) => number): number => rows.reduce((total, row) => total + pick(row), 0);
    const snapshot = {
      succeeded: sum((row) => row.counts.succeeded),
      dead: sum((row) => row.counts.dead),
      remaining: sum((row) => row.due + row.counts.running),
    };
    return { snapshot, tookMs: now() - started };
  };
  const first = (await count()).snapshot;
  const startedAt = now();
  const progress = startProgress(options.stream, { label: `run ${options.queues.join(", ")}`, unit: "jobs done", total: first.remaining, alongsideLogs: true });
  progress.update(0, first.remaining, describe(0, first.remaining, 0));

  const show = (snapshot: Snapshot): void => {
    const done = Math.max(0, snapshot.succeeded - first.succeeded);
    const failed = Math.max(0, snapshot.dead - first.dead);
    const seconds = (now() - startedAt) / 1_000;
    progress.update(done, done + failed + snapshot.remaining, describe(failed, snapshot.remaining, seconds > 0 ? done / seconds : 0));
  };
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let counting: Promise<void> = Promise.resolve();
  const schedule = (delayMs: number): void => {
    timer = setTimeout(() => {
      counting = count().then(
        ({ snapshot, tookMs }) => {
          if (stopped) return;
          show(snapshot);
          schedule(Math.max(intervalMs, tookMs * 10));
        },
        // A failed count only costs an update; the run reports its own database trouble.
        () => {
          if (!stopped) schedule(intervalMs);
        },
      );
    }, delayMs);
    timer.unref();
  };
  schedule(intervalMs);

  return {
    async stop() {
      if (stopped) return;
      stopped = true;
      clearTimeout(timer);
      await counting;
      try {
        show((await count()).snapshot);
      } catch {
        // The last update is a nicety; the run's summary follows on stdout.
      }
      progress.stop();
    },
  };
}

function describe(failed: number, remaining: number, perSecond: number): string {
  return `${formatCount(failed)} failed, ${formatCount(remaining)} remaining, ${perSecond.toFixed(perSecond < 10 ? 1 : 0)}/s`;
}
