import { createReadStream } from "node:fs";
import { resolve } from "node:path";
import { ExitCode } from "@stint/core";
import { CliError } from "../cli-error";
import type { CommandContext } from "../command";

/** Where `--file` reads from: its bytes and how to name it in messages. */
export interface InputSource {
  readonly bytes: AsyncIterable<Uint8Array | string>;
  /** The path as given, or `stdin` for `-`. */
  readonly shown: string;
  /** Stops reading (closes the file; leaves stdin open for others). */
  close(): void;
}

/**
 * Opens the input of `--file`: `-` is standard input (a pipe or a
 * terminal), anything else a path relative to the working directory (a
 * regular file, a FIFO, `/dev/stdin`). Each is read once, as a stream.
 * A file that cannot be opened is a usage error (exit 2).
 *
 * @example
 * ```ts
 * const input = await openInput(context, "-"); // cat jobs.ndjson | stint enqueue q --file -
 * ```
 */
export async function openInput(context: CommandContext, file: string): Promise<InputSource> {
  if (file === "-") {
    const stdin = context.io.stdin ?? process.stdin;
    return { bytes: stdin, shown: "stdin", close: () => undefined };
  }
  const stream = createReadStream(resolve(context.cwd, file));
  try {
    await new Promise<void>((resolveOpen, reject) => {
      stream.once("ready", () => resolveOpen());
      stream.once("error", reject);
    });
  } catch (thrown) {
    throw new CliError(ExitCode.Usage, `cannot read ${file}: ${(thrown as Error).message}`, { cause: thrown });
  }
  return { bytes: stream, shown: file, close: () => stream.destroy() };
}
