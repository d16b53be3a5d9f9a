/** One row of the benchmark table. */
export interface BenchRow {
  readonly benchmark: string;
  readonly jobs: number;
  readonly seconds: number;
  readonly jobsPerSecond: number;
  readonly peakRssMb: number;
  readonly note: string;
}

/**
 * Formats benchmark rows as an aligned text table.
 *
 * @example
 * ```ts
 * console.log(formatBenchTable([{ benchmark: "enqueueMany", jobs: 50_000, seconds: 0.8, jobsPerSecond: 62_500, peakRssMb: 180, note: "" }]));
 * ```
 */
export function formatBenchTable(rows: readonly BenchRow[]): string {
  const header = ["benchmark", "jobs", "seconds", "jobs/s", "peak RSS (MB)", "note"];
  const body = rows.map((row) => [
    row.benchmark,
    row.jobs.toLocaleString("en-US"),
    row.seconds.toFixed(2),
    Math.round(row.jobsPerSecond).toLocaleString("en-US"),
    row.peakRssMb.toFixed(0),
    row.note,
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...body.map((cells) => cells[column]!.length)));
  const line = (cells: readonly string[]): string =>
    cells.map((cell, column) => (column === 0 || column === 5 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join("  ");
  return [line(header), widths.map((width) => "-".repeat(width)).join("  "), ...body.map(line)].join("\n");
}
