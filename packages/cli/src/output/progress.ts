import { SingleBar } from "cli-progress";
import type { OutputStream } from "../io";
import { LiveLine } from "./live-line";
import { formatCount } from "./table";

/** Progress of a long command, shown on stderr. */
export interface Progress {
  /**
   * Reports `done` units so far (and a new total when it changed), with an
   * optional `detail` shown after the count, e.g. `"3 failed, 40 remaining"`.
   */
  update(done: number, total?: number, detail?: string): void;
  /** Ends the display (a bar is left on its last state). Idempotent. */
  stop(): void;
}

/** Options of {@link startProgress}. */
export interface ProgressOptions {
  /** What is being done, e.g. `"enqueue send-invoice"`. */
  readonly label: string;
  /** Units of work when known (a bar with a percentage); unknown: a running count. */
  readonly total?: number;
  /** What is counted, e.g. `"jobs"`. */
  readonly unit: string;
  /** Without a terminal: at most one line per this many ms. Default 2 000. */
  readonly intervalMs?: number;
  /** The clock for the interval (tests). Default `Date.now`. */
  readonly now?: () => number;
  /**
   * Other output (a worker's logs) goes to the same stream meanwhile: on a
   * terminal, draw a plain line kept below it (see `LiveLine`) instead of a
   * bar. Default false.
   */
  readonly alongsideLogs?: boolean;
}

/**
 * Shows progress on `stream`: a `cli-progress` bar on a terminal (or, with
 * `alongsideLogs`, a plain line redrawn in place below the logs), and
 * otherwise a plain line such as `enqueue send-invoice: 12,000/50,000 jobs
 * (24%)` at most every two seconds, so that logs of a CronJob stay readable.
 *
 * @example
 * ```ts
 * const progress = startProgress(io.stderr, { label: "prune succeeded", unit: "jobs" });
 * progress.update(deleted);
 * progress.stop();
 * ```
 */
export function startProgress(stream: OutputStream, options: ProgressOptions): Progress {
  if (stream.isTTY !== true) return new LineProgress(stream, options);
  return options.alongsideLogs === true ? new LiveLineProgress(stream, options) : new BarProgress(stream, options);
}

class BarProgress implements Progress {
  readonly #bar: SingleBar;
  #stopped = false;

  constructor(stream: OutputStream, options: ProgressOptions) {
    const known = options.total !== undefined;
    this.#bar = new SingleBar({
      stream: stream as NodeJS.WritableStream,
      format: known
        ? `${options.label} [{bar}] {percentage}% | {value}/{total} ${options.unit}{detail} | {duration_formatted}`
        : `${options.label}: {value} ${options.unit}{detail} | {duration_formatted}`,
      barCompleteChar: "#",
      barIncompleteChar: "-",
      hideCursor: true,
      etaBuffer: 20,
      formatValue: (value, _options, type) => (type === "value" || type === "total" ? formatCount(value) : String(value)),
    });
    this.#bar.start(options.total ?? 0, 0, { detail: "" });
  }

  update(done: number, total?: number, detail?: string): void {
    if (this.#stopped) return;
    if (total !== undefined) this.#bar.setTotal(total);
    this.#bar.update(done, { detail: detailText(detail) });
  }

  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#bar.stop();
  }
}

class LineProgress implements Progress {
  readonly #stream: OutputStream;
  readonly #options: ProgressOptions;
  readonly #now: () => number;
  #total: number | undefined;
  #lastLineAt: number;
  #stopped = false;

  constructor(stream: OutputStream, options: ProgressOptions) {
    this.#stream = stream;
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#total = options.total;
    this.#lastLineAt = this.#now();
  }

  update(done: number, total?: number, detail?: string): void {
    if (this.#stopped) return;
    if (total !== undefined) this.#total = total;
    const now = this.#now();
    if (now - this.#lastLineAt < (this.#options.intervalMs ?? 2_000)) return;
    this.#lastLineAt = now;
    this.#stream.write(`${progressText(this.#options, done, this.#total, detail)}\n`);
  }

  stop(): void {
    this.#stopped = true;
  }
}

/** On a terminal shared with logs: the plain line, redrawn in place below them. */
class LiveLineProgress implements Progress {
  readonly #line: LiveLine;
  readonly #options: ProgressOptions;
  #total: number | undefined;

  constructor(stream: OutputStream, options: ProgressOptions) {
    this.#line = new LiveLine(stream);
    this.#options = options;
    this.#total = options.total;
    this.#line.show(progressText(options, 0, this.#total, undefined));
  }

  update(done: number, total?: number, detail?: string): void {
    if (total !== undefined) this.#total = total;
    this.#line.show(progressText(this.#options, done, this.#total, detail));
  }

  stop(): void {
    this.#line.close();
  }
}

/** `enqueue q: 12,000/50,000 jobs (24%), detail`. */
function progressText(options: ProgressOptions, done: number, total: number | undefined, detail: string | undefined): string {
  const of = total === undefined ? "" : `/${formatCount(total)}`;
  const percent = total === undefined || total === 0 ? "" : ` (${Math.floor((done / total) * 100)}%)`;
  return `${options.label}: ${formatCount(done)}${of} ${options.unit}${percent}${detailText(detail)}`;
}

function detailText(detail: string | undefined): string {
  return detail === undefined || detail === "" ? "" : `, ${detail}`;
}
