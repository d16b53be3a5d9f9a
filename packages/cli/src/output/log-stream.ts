import { Writable } from "node:stream";
import type { LogStream } from "@stint/core";
import type { OutputStream } from "../io";

/**
 * A writable stream for stint's logger that writes into one of the CLI's
 * output streams (the process's stderr, or a test's capture).
 *
 * @example
 * ```ts
 * const log = createLogger({ stream: logStreamOf(context.io.stderr), env: context.io.env });
 * ```
 */
export function logStreamOf(out: OutputStream): LogStream {
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      out.write(typeof chunk === "string" ? chunk : chunk.toString("utf8"));
      done();
    },
  });
  return Object.assign(stream, { isTTY: out.isTTY === true });
}
