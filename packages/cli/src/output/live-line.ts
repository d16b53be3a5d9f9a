import type { OutputStream } from "../io";

/** Clears the terminal line the cursor is on and returns to its start. */
const CLEAR_LINE = "\r\x1b[K";

/** A stream whose `write` can be replaced for a while. */
type Patchable = OutputStream & { write: (chunk: string | Uint8Array, ...rest: unknown[]) => unknown };

/**
 * One line kept at the bottom of a terminal and redrawn in place, while
 * everything else written to the same stream — a worker's log lines —
 * scrolls above it. Until {@link LiveLine.close}, other writes to the stream
 * are intercepted: each clears the line first, and once a write ends a line
 * the live line is drawn again below it. (A `cli-progress` bar cannot share
 * its stream: it saves the cursor position at start and restores it at the
 * end, which lands in the middle of lines written meanwhile.)
 *
 * @example
 * ```ts
 * const line = new LiveLine(process.stderr);
 * line.show("run send-invoice: 12/40 jobs done");
 * line.close("run send-invoice: 40/40 jobs done");
 * ```
 */
export class LiveLine {
  readonly #stream: Patchable;
  readonly #write: Patchable["write"];
  readonly #ownWrite: PropertyDescriptor | undefined;
  #text = "";
  #drawn = false;
  /** The last foreign write did not end its line: drawing now would append to it. */
  #midLine = false;
  #closed = false;

  constructor(stream: OutputStream) {
    this.#stream = stream as Patchable;
    this.#ownWrite = Object.getOwnPropertyDescriptor(stream, "write");
    const write = this.#stream.write.bind(stream);
    this.#write = (chunk, ...rest) => write(chunk, ...rest);
    this.#stream.write = (chunk, ...rest) => this.#foreign(chunk, rest);
  }

  /** Draws `text` as the live line, replacing what it showed. */
  show(text: string): void {
    if (this.#closed) return;
    this.#text = text;
    this.#draw();
  }

  /** Leaves `text` (default: the last line shown) as an ordinary line and gives the stream back. Idempotent. */
  close(text = this.#text): void {
    if (this.#closed) return;
    if (text !== this.#text || !this.#drawn) {
      this.#text = text;
      this.#draw();
    }
    this.#closed = true;
    if (this.#drawn) this.#write("\n");
    if (this.#ownWrite === undefined) delete (this.#stream as { write?: unknown }).write;
    else Object.defineProperty(this.#stream, "write", this.#ownWrite);
  }

  #draw(): void {
    if (this.#midLine || this.#text === "") return;
    this.#write(`${CLEAR_LINE}${this.#text}`);
    this.#drawn = true;
  }

  #foreign(chunk: string | Uint8Array, rest: unknown[]): unknown {
    if (this.#drawn) this.#write(CLEAR_LINE);
    this.#drawn = false;
    const result = this.#write(chunk, ...rest);
    const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
    if (text !== "") this.#midLine = !text.endsWith("\n");
    this.#draw();
    return result;
  }
}
