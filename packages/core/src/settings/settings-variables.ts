/**
 * The suffix of a queue's own settings variables: the queue name upper-cased,
 * every character other than a letter or digit turned into `_`. Two queue
 * names can share a suffix (`send.invoice` and `send-invoice`); a run of both
 * refuses a variable with that suffix rather than guess which queue it means.
 *
 * @example
 * ```ts
 * queueVariableSuffix("send-invoice-email"); // "SEND_INVOICE_EMAIL"
 * ```
 */
export function queueVariableSuffix(queue: string): string {
  return queue.toUpperCase().replace(/[^A-Z0-9]/g, "_");
}

/**
 * The variable that sets `variable` for one queue.
 *
 * @example
 * ```ts
 * queueVariable("STINT_CONCURRENCY", "send-invoice-email"); // "STINT_CONCURRENCY_SEND_INVOICE_EMAIL"
 * ```
 */
export function queueVariable(variable: string, queue: string): string {
  return `${variable}_${queueVariableSuffix(queue)}`;
}

/** An environment value as text, or `undefined` when unset or only white space. */
export function presentValue(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === "" ? undefined : trimmed;
}
