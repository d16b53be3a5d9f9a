import { randomUUID } from "node:crypto";

/**
 * Where an `import-file` job keeps a file between its two steps: a stand-in
 * for object storage, in memory, so the example runs anywhere.
 */
const stored = new Map<string, string>();

/**
 * Copies the file at `url` into storage and returns its upload id.
 *
 * @example
 * ```ts
 * const uploadId = await copyToStorage("https://files.example/orders.csv", signal);
 * ```
 */
export async function copyToStorage(url: string, signal: AbortSignal): Promise<string> {
  signal.throwIfAborted();
  const uploadId = randomUUID();
  stored.set(uploadId, url);
  return Promise.resolve(uploadId);
}

/**
 * Imports the rows of an uploaded file and says how many there were.
 *
 * @example
 * ```ts
 * const rows = await importRows(uploadId, signal);
 * ```
 */
export async function importRows(uploadId: string, signal: AbortSignal): Promise<number> {
  signal.throwIfAborted();
  const url = stored.get(uploadId);
  if (url === undefined) throw new Error(`no upload ${uploadId}`);
  return Promise.resolve(url.length);
}
