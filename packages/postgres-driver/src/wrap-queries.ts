import pg from "pg";
import { dropConnection } from "./close-within";
import { preparedStatementName } from "./prepared-statement-name";
import { ReadTimeoutWatch } from "./read-timeout-watch";

/** What a connection discarded after a read timeout fails with: expected, so never reported as a pool error. */
export const DISCARDED = new Error("connection discarded after a query read timeout");

/** The message a statement whose answer did not come within the read timeout fails with (pg's own). */
const READ_TIMEOUT_MESSAGE = "Query read timeout";

type Callback = (error: Error | undefined, result?: unknown) => void;

/**
 * Wraps a pooled client's `query`:
 *
 * - a statement text marked as a hot-path one (`PREPARED_MARK`) is sent as
 *   a named prepared statement (when `prepare`);
 * - with `readTimeoutMs` (a pool stint created), a statement not answered in
 *   time fails with "Query read timeout" and the connection is dropped, so
 *   the pool discards it: pg keeps waiting for the lost answer on that
 *   connection otherwise, and every later statement on it would time out
 *   too. The statements of the forms stint sends (text and values, with or
 *   without a callback) share one timer per connection
 *   ({@link ReadTimeoutWatch}); any other form gets pg's `query_timeout`;
 * - a client that saw pg's own `query_timeout` (a pool passed in) is made
 *   unusable the same way.
 *
 * @example
 * ```ts
 * pool.on("connect", (client) => wrapQueries(client, true, 35_000));
 * ```
 */
export function wrapQueries(client: pg.PoolClient, prepare: boolean, readTimeoutMs: number): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const destroy = (): void => dropConnection(client, DISCARDED);
  const watch = readTimeoutMs > 0 ? new ReadTimeoutWatch(readTimeoutMs, () => dropConnection(client, new Error(READ_TIMEOUT_MESSAGE))) : undefined;
  client.query = function (...args: unknown[]) {
    // (text, values) from Kysely, or (text, values, callback) from the pool's own query.
    const [text, values, callback] = args;
    const plain =
      typeof text === "string" &&
      (values === undefined || Array.isArray(values)) &&
      (args.length <= 2 || (args.length === 3 && typeof callback === "function"));
    if (!plain) return query(...(watch === undefined ? args : withQueryTimeout(args, readTimeoutMs)));
    const name = prepare && values !== undefined ? preparedStatementName(text) : undefined;
    const answered = watch?.sent();
    if (args.length === 3) {
      // The pool's own query: a Query made from the text skips the copy pg makes of a config object (about 10 µs of
      // the path from enqueue to handler start on a process idle between jobs).
      const done = callback as Callback;
      const whenAnswered: Callback =
        answered === undefined
          ? done
          : (error, result) => {
              answered();
              done(error, result);
            };
      const made = new pg.Query(text, values as unknown[] | undefined, whenAnswered);
      if (name !== undefined) (made as { name?: string }).name = name;
      return query(made);
    }
    const result = name === undefined ? query(text, values) : query({ name, text, values });
    if (result instanceof Promise) {
      result.then(answered, (error: unknown) => {
        answered?.();
        if (error instanceof Error && error.message === READ_TIMEOUT_MESSAGE) destroy();
      });
    }
    return result;
  } as typeof client.query;
}

/** `args` with pg's per-statement `query_timeout` set, for the forms the shared timer does not watch. */
function withQueryTimeout(args: unknown[], readTimeoutMs: number): unknown[] {
  const [config, ...rest] = args;
  if (typeof config === "string") return [{ text: config, query_timeout: readTimeoutMs }, ...rest];
  if (typeof config !== "object" || config === null || (config as { query_timeout?: unknown }).query_timeout !== undefined) return args;
  // A Query or another submittable is used as it is (pg reads the field from it); a plain config object is copied.
  if (typeof (config as { submit?: unknown }).submit === "function") {
    (config as { query_timeout?: number }).query_timeout = readTimeoutMs;
    return args;
  }
  return [{ ...config, query_timeout: readTimeoutMs }, ...rest];
}
