import { MAX_ERROR_MESSAGE, MAX_ERROR_TEXT } from "../limits";

/**
 * Turns anything a `catch` can receive into an `Error`, keeping the original
 * as `cause` when it was not one. Every `catch` in stint goes through here.
 *
 * @example
 * ```ts
 * try { await work(); } catch (thrown) { log.error(coerceError(thrown).message); }
 * ```
 */
export function coerceError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  if (typeof thrown === "object" && thrown !== null && typeof (thrown as { message?: unknown }).message === "string") {
    const error = new Error((thrown as { message: string }).message, { cause: thrown });
    error.name = typeof (thrown as { name?: unknown }).name === "string" ? (thrown as { name: string }).name : "Error";
    return error;
  }
  return new Error(describeThrown(thrown), { cause: thrown });
}

function describeThrown(thrown: unknown): string {
  if (typeof thrown === "string") return thrown;
  try {
    return `non-error thrown: ${JSON.stringify(thrown)}`;
  } catch {
    return `non-error thrown: ${String(thrown)}`;
  }
}

/**
 * The text stored in `last_error`: the stack (or message) of the error and of
 * its causes, passed through `scrub` (the worker redacts the job's secret
 * fields there, before the cut, so no part of a secret survives it) and
 * capped at {@link MAX_ERROR_TEXT} characters.
 *
 * @example
 * ```ts
 * describeError(new Error("boom", { cause: new Error("socket hang up") }));
 * // "Error: boom\n    at …\nCaused by: Error: socket hang up\n    at …"
 * ```
 */
export function describeError(thrown: unknown, scrub: (text: string) => string = (text) => text): string {
  const parts: string[] = [];
  let current: unknown = thrown;
  for (let depth = 0; current !== undefined && depth < 5; depth += 1) {
    const error = coerceError(current);
    parts.push((depth === 0 ? "" : "Caused by: ") + (error.stack ?? `${error.name}: ${error.message}`));
    current = error.cause === current ? undefined : error.cause;
  }
  // Made storable before the cut (an escaped NUL is longer) and after it (the cut may split a surrogate pair).
  const text = storable(scrub(parts.join("\n")));
  return storable(text.length <= MAX_ERROR_TEXT ? text : `${text.slice(0, MAX_ERROR_TEXT - 20)}\n… (truncated)`);
}

/**
 * The one-line summary of an error stored in an attempt's history record:
 * `Name: message` of the error itself (no stack, no causes), passed through
 * `scrub` like {@link describeError}, cut to {@link MAX_ERROR_MESSAGE}
 * characters (with a `…` marking the cut) and made storable.
 *
 * @example
 * ```ts
 * errorSummary(new TypeError("amount must be positive")); // "TypeError: amount must be positive"
 * ```
 */
export function errorSummary(thrown: unknown, scrub: (text: string) => string = (text) => text): string {
  const error = coerceError(thrown);
  const text = storable(scrub(error.message === "" ? error.name : `${error.name}: ${error.message}`));
  return storable(text.length <= MAX_ERROR_MESSAGE ? text : `${text.slice(0, MAX_ERROR_MESSAGE - 1)}…`);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Text PostgreSQL can store in a `text` column: a NUL becomes the visible
 * escape `\\u0000`, an unpaired surrogate becomes U+FFFD. Error messages
 * quote whatever a handler met, and an outcome write must not fail on them.
 */
function storable(text: string): string {
  return text.replaceAll("\u0000", "\\u0000").replace(LONE_SURROGATE, "\uFFFD");
}
