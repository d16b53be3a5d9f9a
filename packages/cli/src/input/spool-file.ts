import { createReadStream } from "node:fs";
import { mkdtemp, open, rm, type FileHandle } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ndjsonLines } from "./ndjson-lines";

/** Bytes gathered before one write to the spool file. */
const WRITE_CHUNK_BYTES = 1_048_576;

/**
 * A private temporary file of lines (mode 0600, in the system's temporary
 * directory), so that input that can be read only once (a pipe, a FIFO,
 * stdin) is validated in full before anything is inserted without holding
 * it all in memory. Write with `append`, then `finish`, read back with
 * `lines`, and always `remove`.
 *
 * @example
 * ```ts
 * const spool = await SpoolFile.create();
 * try {
 *   await spool.append('{"n":1}');
 *   await spool.finish();
 *   for await (const text of spool.lines(1_048_576)) console.log(text);
 * } finally {
 *   await spool.remove();
 * }
 * ```
 */
export class SpoolFile {
  readonly #dir: string;
  readonly #path: string;
  readonly #handle: FileHandle;
  #pending: string[] = [];
  #pendingBytes = 0;
  #count = 0;

  private constructor(dir: string, handle: FileHandle) {
    this.#dir = dir;
    this.#path = join(dir, "lines.ndjson");
    this.#handle = handle;
  }

  /** Creates an empty spool file. */
  static async create(): Promise<SpoolFile> {
    const dir = await mkdtemp(join(tmpdir(), "stint-enqueue-"));
    try {
      return new SpoolFile(dir, await open(join(dir, "lines.ndjson"), "wx", 0o600));
    } catch (thrown) {
      await rm(dir, { recursive: true, force: true });
      throw thrown;
    }
  }

  /** Lines appended so far. */
  get count(): number {
    return this.#count;
  }

  /** Adds one line; `text` must not contain a newline (JSON text from `JSON.stringify` never does). */
  async append(text: string): Promise<void> {
    this.#pending.push(text, "\n");
    this.#pendingBytes += text.length + 1;
    this.#count += 1;
    if (this.#pendingBytes >= WRITE_CHUNK_BYTES) await this.#flush();
  }

  /** Writes what is buffered and closes the file for writing. */
  async finish(): Promise<void> {
    await this.#flush();
    await this.#handle.close();
  }

  /** The lines, in the order appended. */
  async *lines(maxLineBytes: number): AsyncGenerator<string> {
    const stream = createReadStream(this.#path);
    try {
      for await (const { text } of ndjsonLines(stream, maxLineBytes)) yield text;
    } finally {
      stream.destroy();
    }
  }

  /** Deletes the file. Idempotent. */
  async remove(): Promise<void> {
    await this.#handle.close().catch(() => undefined);
    await rm(this.#dir, { recursive: true, force: true });
  }

  async #flush(): Promise<void> {
    if (this.#pending.length === 0) return;
    const text = this.#pending.join("");
    this.#pending = [];
    this.#pendingBytes = 0;
    await this.#handle.writeFile(text, "utf8");
  }
}
