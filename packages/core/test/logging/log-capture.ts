import { Writable } from "node:stream";
import { eventually } from "../../src/testing/eventually";

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
  lines(count: number, timeoutMs = 2_000): Promise<string[]> {
    return eventually(
      () => {
        const lines = this.text.split("\n").filter((line) => line !== "");
        return lines.length >= count && lines;
      },
      { timeoutMs, intervalMs: 0, what: `${count} log lines` },
    );
  }
}
