/** One queue's line in the demo's summary. */
export interface SummaryRow {
  readonly queue: string;
  /** All jobs of the queue. */
  readonly jobs: number;
  readonly succeeded: number;
  /** Failed attempts that were retried. */
  readonly retried: number;
  readonly dead: number;
  /** Jobs still queued, running or waiting for a retry. */
  readonly left: number;
  /** Time the queue's worker spent running, in ms. */
  readonly timeMs: number;
}

const COLUMNS = ["queue", "jobs", "succeeded", "retried", "dead", "left", "time"] as const;

/**
 * Formats the per-queue summary as a plain-text table with a total line.
 *
 * @example
 * ```ts
 * formatSummaryTable([{ queue: "send-invoice-email", jobs: 212, succeeded: 210, retried: 20, dead: 2, left: 0, timeMs: 1234 }]);
 * // queue               jobs  succeeded  retried  dead  left    time
 * // send-invoice-email   212        210       20     2     0  1.23 s
 * // total                212        210       20     2     0  1.23 s
 * ```
 */
export function formatSummaryTable(rows: readonly SummaryRow[]): string {
  const total: SummaryRow = {
    queue: "total",
    jobs: sum(rows, "jobs"),
    succeeded: sum(rows, "succeeded"),
    retried: sum(rows, "retried"),
    dead: sum(rows, "dead"),
    left: sum(rows, "left"),
    timeMs: sum(rows, "timeMs"),
  };
  const cells = [...rows, total].map((row) => [
    row.queue,
    String(row.jobs),
    String(row.succeeded),
    String(row.retried),
    String(row.dead),
    String(row.left),
    `${(row.timeMs / 1000).toFixed(2)} s`,
  ]);
  const widths = COLUMNS.map((title, column) => Math.max(title.length, ...cells.map((line) => (line[column] ?? "").length)));
  const format = (line: readonly string[]): string =>
    line.map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0))).join("  ");
  return [format(COLUMNS), ...cells.map(format)].join("\n");
}

function sum(rows: readonly SummaryRow[], key: "jobs" | "succeeded" | "retried" | "dead" | "left" | "timeMs"): number {
  return rows.reduce((total, row) => total + row[key], 0);
}
