import { runCli, type OutputStream } from "../../src/index";

/** A stream that keeps what was written. */
export class CapturedStream implements OutputStream {
  text = "";
  readonly isTTY: boolean;
  readonly columns = 100;

  constructor(isTTY = false) {
    this.isTTY = isTTY;
  }

  write(chunk: string | Uint8Array): boolean {
    this.text += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
    return true;
  }
}

/** What one in-process `stint` invocation printed and returned. */
export interface StintResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** stdout parsed as the one JSON document `--json` prints. */
  json(): unknown;
}

/** What a failing command prints to stderr with `--json`. */
export interface ErrorJson {
  readonly error: { readonly code: string; readonly message: string };
}

/** Options of {@link stint}. */
export interface StintOptions {
  /** The environment; default: only `DATABASE_URL` from the test process. */
  readonly env?: Record<string, string | undefined>;
  readonly signal?: AbortSignal;
  readonly cwd?: string;
  /** What `--file -` reads. */
  readonly stdin?: AsyncIterable<Uint8Array | string>;
  /** Pretend stderr is a terminal (progress bars). */
  readonly tty?: boolean;
}

/**
 * Runs `stint <args>` in-process with captured output.
 *
 * @example
 * ```ts
 * const result = await stint(["status", "--schema", test.schema, "--json"]);
 * expect(result.code).to.equal(0);
 * ```
 */
export async function stint(args: readonly string[], options: StintOptions = {}): Promise<StintResult> {
  const stdout = new CapturedStream();
  const stderr = new CapturedStream(options.tty ?? false);
  const code = await runCli(args, {
    stdout,
    stderr,
    env: options.env ?? { DATABASE_URL: process.env["DATABASE_URL"] },
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    ...(options.stdin === undefined ? {} : { stdin: options.stdin }),
  });
  return {
    code,
    stdout: stdout.text,
    stderr: stderr.text,
    json: () => JSON.parse(stdout.text) as unknown,
  };
}

/** The connection string of the test database, or a clear failure. */
export function databaseUrl(): string {
  const url = process.env["DATABASE_URL"];
  if (url === undefined || url === "") throw new Error("set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres) to run the CLI tests");
  return url;
}
