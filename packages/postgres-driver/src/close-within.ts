import type pg from "pg";

/**
 * How long closing waits for a connection's orderly end before it drops the
 * socket: the server acknowledges a close in milliseconds, but over a
 * network that silently stopped carrying packets it never will.
 */
export const CLOSE_TIMEOUT_MS = 1_000;

/**
 * Waits for `ending` (an orderly close: a last statement, `Terminate`, the
 * server's end) at most `ms`; if it has not settled by then, calls `drop` to
 * destroy the sockets, and waits for `ending` at most `ms` more. Never
 * rejects: a stop must finish when the network is gone.
 *
 * @example
 * ```ts
 * await closeWithin(client.end(), () => dropConnection(client));
 * ```
 */
export async function closeWithin(ending: Promise<unknown>, drop: () => void, ms: number = CLOSE_TIMEOUT_MS): Promise<void> {
  const settled = ending.then(
    () => true,
    () => true,
  );
  if (await Promise.race([settled, delay(ms)])) return;
  drop();
  await Promise.race([settled, delay(ms)]);
}

/**
 * Waits for `work` at most `ms`, and never rejects: for clean-up a closing
 * connection attempts on its way out (removing its registrations), which
 * must neither fail the close nor hold it up.
 *
 * @example
 * ```ts
 * await settleWithin(removeWaiters(query, schema, { waiter }), 500);
 * ```
 */
export async function settleWithin(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work.catch(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/** Destroys a client's socket at once: pg then ends the client, failing whatever it was waiting for. */
export function dropConnection(client: pg.Client | pg.PoolClient, error?: Error): void {
  const stream = (client as unknown as { connection?: { stream?: { destroy(error?: Error): void } } }).connection?.stream;
  stream?.destroy(error);
}

function delay(ms: number): Promise<false> {
  return new Promise((resolve) => setTimeout(() => resolve(false), ms).unref());
}
