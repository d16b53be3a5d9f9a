/** A link in a markdown file: what it points at, and the line it is on. */
export interface MarkdownLink {
  /** The target as written, without a title: `docs/failures.md#dead-jobs-ondead`, `#options`, `https://…`. */
  readonly target: string;
  readonly line: number;
}

/**
 * The text of `markdown` with fenced code blocks and inline code spans
 * blanked out (newlines kept, so line numbers stay right): what they hold
 * is code, not links or headings.
 */
export function withoutCode(markdown: string): string {
  const blank = (text: string): string => text.replace(/[^\n]/g, " ");
  return markdown.replace(/^[ \t]*(`{3,}|~{3,})[^\n]*\n[\s\S]*?^[ \t]*\1[ \t]*$/gm, blank).replace(/`[^`\n]+`/g, blank);
}

/**
 * The inline links and images of `markdown` outside code: `[text](target)`
 * and `![alt](target "title")`.
 *
 * @example
 * ```ts
 * markdownLinks("See [Failures](docs/failures.md#retries).");
 * // [{ target: "docs/failures.md#retries", line: 1 }]
 * ```
 */
export function markdownLinks(markdown: string): MarkdownLink[] {
  const text = withoutCode(markdown);
  const links: MarkdownLink[] = [];
  for (const match of text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    links.push({ target: match[1] ?? "", line: text.slice(0, match.index).split("\n").length });
  }
  return links;
}

/**
 * The anchor GitHub gives a heading: lower case, markup and punctuation
 * dropped (letters, digits, `-` and `_` kept), each space a `-`.
 *
 * @example
 * ```ts
 * headingSlug('Leases, heartbeats and what "at least once" means'); // "leases-heartbeats-and-what-at-least-once-means"
 * headingSlug("Dead jobs: `onDead`");                               // "dead-jobs-ondead"
 * ```
 */
export function headingSlug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/ /g, "-");
}

/**
 * Every anchor a link may point at in `markdown`: the slug of each ATX
 * heading outside code (a repeated one gets `-1`, `-2`, … as on GitHub),
 * and the `id` or `name` of each HTML anchor.
 *
 * @example
 * ```ts
 * markdownAnchors("# Setup\n\n## Setup\n"); // Set { "setup", "setup-1" }
 * ```
 */
export function markdownAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  // Headings are read from the text with code blanked out, but spans in them keep their words.
  const blanked = withoutCode(markdown).split("\n");
  const lines = markdown.split("\n");
  lines.forEach((line, index) => {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading === null || blanked[index]?.trimStart().startsWith("#") !== true) return;
    const slug = headingSlug(heading[1] ?? "");
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  });
  for (const match of markdown.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1] ?? "");
  return anchors;
}
