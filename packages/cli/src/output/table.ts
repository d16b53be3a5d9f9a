/** One column of {@link formatTable}: its title and whether it is right-aligned (numbers). */
export interface Column {
  readonly title: string;
  readonly align?: "left" | "right";
}

/**
 * Formats rows as an aligned text table: a header, a rule, then the rows,
 * two spaces between columns, no trailing spaces.
 *
 * @example
 * ```ts
 * formatTable([{ title: "queue" }, { title: "dead", align: "right" }], [["send-invoice", "2"]]);
 * // queue         dead
 * // ------------  ----
 * // send-invoice     2
 * ```
 */
export function formatTable(columns: readonly Column[], rows: readonly (readonly string[])[]): string {
  const widths = columns.map((column, index) => Math.max(displayWidth(column.title), ...rows.map((cells) => displayWidth(cells[index] ?? ""))));
  const line = (cells: readonly string[]): string =>
    columns
      .map((column, index) => pad(cells[index] ?? "", widths[index]!, column.align ?? "left"))
      .join("  ")
      .trimEnd();
  return [line(columns.map((column) => column.title)), widths.map((width) => "-".repeat(width)).join("  "), ...rows.map(line)].join("\n");
}

/** Formats an integer with thousands separators: `12345` → `"12,345"`. */
export function formatCount(value: number): string {
  return value.toLocaleString("en-US");
}

/** Cuts `text` to its first line and at most `max` characters, marking the cut with `…`. */
export function truncate(text: string, max: number): string {
  const firstLine = text.split("\n", 1)[0] ?? "";
  const cut = firstLine.length > max || firstLine.length < text.length;
  return cut ? `${firstLine.slice(0, Math.max(0, max - 1))}…` : firstLine;
}

function pad(text: string, width: number, align: "left" | "right"): string {
  const fill = " ".repeat(Math.max(0, width - displayWidth(text)));
  return align === "right" ? fill + text : text + fill;
}

function displayWidth(text: string): number {
  return Array.from(text).length;
}
