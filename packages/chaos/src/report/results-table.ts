import type { ScenarioResult } from "../harness/scenario";

const HEADERS = ["#", "scenario", "jobs", "faults injected", "lost", "duplicates", "re-executions", "result", "time"];

/**
 * The suite's table, one row per scenario, as Markdown (readable in a
 * terminal, pasteable into a README), followed by each scenario's figures
 * and, for a failed one, why.
 *
 * @example
 * ```ts
 * console.log(resultsTable(results));
 * // | # | scenario                  | jobs   | faults injected | lost | duplicates | re-executions | result | time  |
 * // | 1 | kill -9 worker processes  | 10,000 | 32 × SIGKILL    | 0    | 0          | 118           | pass   | 41.2 s |
 * ```
 */
export function resultsTable(results: readonly ScenarioResult[]): string {
  const rows = results.map((result) => [
    String(result.id),
    result.title,
    formatCount(result.jobs),
    result.faults,
    formatCount(result.lost),
    formatCount(result.duplicates),
    formatCount(result.reExecutions),
    result.passed ? "pass" : "FAIL",
    `${(result.durationMs / 1_000).toFixed(1)} s`,
  ]);
  const widths = HEADERS.map((header, column) => Math.max(header.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: readonly string[]): string => `| ${cells.map((cell, column) => cell.padEnd(widths[column]!)).join(" | ")} |`;
  const rule = `| ${widths.map((width) => "-".repeat(width)).join(" | ")} |`;
  const notes = results.flatMap((result) => [`${result.id}. ${result.figures.join("; ")}`, ...result.failures.map((failure) => `   FAILED: ${failure}`)]);
  return [line(HEADERS), rule, ...rows.map(line), "", ...notes].join("\n");
}

function formatCount(n: number): string {
  return n.toLocaleString("en-US");
}
