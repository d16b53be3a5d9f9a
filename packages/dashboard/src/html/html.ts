/**
 * Markup that is already safe: built by {@link html} (whose values were
 * escaped) or marked with {@link trustedHtml}. Anything else put into a
 * template is text and gets escaped.
 */
export class Html {
  readonly #text: string;

  constructor(text: string) {
    this.#text = text;
  }

  toString(): string {
    return this.#text;
  }
}

const ESCAPES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/**
 * `text` with `& < > " '` replaced by entities: safe in element content
 * and in quoted attribute values.
 *
 * @example
 * ```ts
 * escapeHtml('<script>alert("x")</script>'); // "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"
 * ```
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ESCAPES[character]!);
}

/** What a template may hold: markup, text, a number, nothing (`null`, `undefined`, `false`), or a list of these. */
export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

/**
 * The one way the dashboard writes HTML: a template whose every value is
 * escaped unless it is {@link Html} already. Arrays are joined; `null`,
 * `undefined` and `false` write nothing, so `${cond && html`…`}` works.
 *
 * @example
 * ```ts
 * html`<td title="${job.queue}">${job.errorHead}</td>`; // both values escaped
 * html`<ul>${items.map((item) => html`<li>${item}</li>`)}</ul>`;
 * ```
 */
export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): Html {
  let out = strings[0]!;
  values.forEach((value, index) => {
    out += render(value) + strings[index + 1]!;
  });
  return new Html(out);
}

/**
 * Marks text as markup without escaping it. Only for text the dashboard
 * computed itself from numbers (the sparkline's coordinates) or constants.
 */
export function trustedHtml(text: string): Html {
  return new Html(text);
}

function render(value: HtmlValue): string {
  if (value instanceof Html) return value.toString();
  if (value === null || value === undefined || value === false) return "";
  if (Array.isArray(value)) return value.map(render).join("");
  return escapeHtml(String(value));
}
