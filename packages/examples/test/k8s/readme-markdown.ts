/** The rows of every Markdown table whose first header cell is `resource`, keyed by header; backticks removed. */
export function resourceTables(markdown: string): Array<Array<Record<string, string>>> {
  const tables: Array<Array<Record<string, string>>> = [];
  const lines = markdown.split("\n");
  const cells = (line: string) =>
    line
      .trim()
      .replace(/^\||\|$/g, "")
      .split("|")
      .map((cell) => cell.trim().replace(/`/g, ""));
  for (let i = 0; i < lines.length; i += 1) {
    if (!lines[i]!.startsWith("| resource |")) continue;
    const header = cells(lines[i]!);
    const rows: Array<Record<string, string>> = [];
    for (i += 2; i < lines.length && lines[i]!.startsWith("|"); i += 1) {
      const row = cells(lines[i]!);
      rows.push(Object.fromEntries(header.map((name, column) => [name, row[column] ?? ""])));
    }
    tables.push(rows);
  }
  return tables;
}

/** Lines trimmed, blank lines dropped, so re-indented excerpts still match. */
export function normalised(text: string): string[] {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
}

/** Whether `needle` occurs in `haystack` as consecutive lines. */
export function containsRun(haystack: readonly string[], needle: readonly string[]): boolean {
  for (let start = 0; start + needle.length <= haystack.length; start += 1) {
    if (needle.every((line, offset) => haystack[start + offset] === line)) return true;
  }
  return false;
}
