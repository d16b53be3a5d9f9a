import { Writable } from "node:stream";
import { setImmediate as nextTurn } from "node:timers/promises";

/** A writable stream that keeps what is written, posing as a terminal or not. */
export class LogCapture extends Writable {
  text = "";
  readonly isTTY: boolean;

  constructor(isTTY = false) {
    super();
    this.isTTY = isTTY;
  }

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }

  /** The written lines once there are at least `count`; fails after `timeoutMs`. */
  async lines(count: number, timeoutMs = 2_000): Promise<string[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const lines = this.text.split("\n").filter((line) => line !== "");
      if (lines.length >= count) return lines;
      if (Date.now() > deadline) throw new Error(`expected ${count} log lines within ${timeoutMs} ms, got ${JSON.stringify(this.text)}`);
      await nextTurn();
    }
  }
}
