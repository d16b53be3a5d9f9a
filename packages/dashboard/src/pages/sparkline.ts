import { html, trustedHtml, type Html } from "../html/html";

const WIDTH = 96;
const HEIGHT = 24;

/**
 * A tiny inline SVG of counts over time (oldest first): a filled line
 * scaled to the largest count, with the counts in its title for screen
 * readers and hover. Coordinates are numbers the dashboard computes, so
 * the path is trusted; the title is escaped.
 *
 * @example
 * ```ts
 * sparkline([0, 3, 5, 2], "succeeded per 5 minutes"); // <svg …><path d="M0,24 …"/></svg>
 * ```
 */
export function sparkline(counts: readonly number[], label: string): Html {
  const max = Math.max(1, ...counts);
  const step = counts.length > 1 ? WIDTH / (counts.length - 1) : WIDTH;
  const points = counts.map((count, index) => `${round(index * step)},${round(HEIGHT - 1 - (count / max) * (HEIGHT - 2))}`);
  const line = `M${points.join(" L")}`;
  const area = `${line} L${WIDTH},${HEIGHT} L0,${HEIGHT} Z`;
  return html`<svg class="spark" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" role="img" aria-label="${label}: ${counts.join(", ")}"><title>${label}: ${counts.join(", ")}</title><path class="spark-area" d="${trustedHtml(area)}"/><path class="spark-line" d="${trustedHtml(line)}"/></svg>`;
}

function round(value: number): string {
  return (Math.round(value * 10) / 10).toString();
}
