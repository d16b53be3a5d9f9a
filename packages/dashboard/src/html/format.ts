import { html, type Html } from "./html";

const COUNT = new Intl.NumberFormat("en-US");

/** `12345` as `"12,345"`. */
export function formatCount(value: number): string {
  return COUNT.format(value);
}

/**
 * A count read with a cap (see `countJobsUpTo`): `"10,000+"` when it went
 * past `cap`.
 */
export function formatCapped(value: number, cap: number): string {
  return value > cap ? `${formatCount(cap)}+` : formatCount(value);
}

/** A duration for people: `"850 ms"`, `"12 s"`, `"4 min"`, `"3 h 5 min"`, `"2 d 4 h"`. */
export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${Math.max(0, Math.round(ms))} ms`;
  const seconds = Math.floor(ms / 1_000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
  const days = Math.floor(hours / 24);
  return hours % 24 === 0 ? `${days} d` : `${days} d ${hours % 24} h`;
}

/**
 * A point in time as `<time>`: written in UTC by the server, rewritten in
 * the viewer's time zone by the page's script.
 */
export function timeElement(date: Date | null): Html {
  if (date === null) return html`<span class="muted">–</span>`;
  const iso = date.toISOString();
  return html`<time datetime="${iso}">${iso.replace("T", " ").replace(/\.\d{3}Z$/, " UTC")}</time>`;
}
