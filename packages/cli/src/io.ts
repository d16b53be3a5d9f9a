/** Where the CLI writes: `process.stdout` and `process.stderr`, or a capture in tests. */
export interface OutputStream {
  write(chunk: string): unknown;
  /** True on a terminal: progress bars instead of periodic lines. */
  readonly isTTY?: boolean;
  readonly columns?: number;
}

/**
 * What {@link runCli} runs against: output streams, the environment and an
 * optional interrupt signal. The `stint` binary passes the process's;
 * tests pass captures and their own environment.
 */
export interface CliIo {
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  /**
   * Aborts when the operator interrupts (the binary aborts it on the first
   * SIGINT or SIGTERM). Long commands stop between batches and exit 130;
   * `run` shuts its workers down gracefully.
   */
  readonly signal?: AbortSignal;
  /** What `--file -` reads. Default `process.stdin`. */
  readonly stdin?: AsyncIterable<Uint8Array | string>;
  /** Directory that relative paths (`--file`, `--app`) are read from. Default `process.cwd()`. */
  readonly cwd?: string;
}

/** Writes lines and JSON documents to stdout. */
export class Output {
  readonly #io: CliIo;

  constructor(io: CliIo) {
    this.#io = io;
  }

  /** Writes `text` and a newline to stdout. */
  line(text = ""): void {
    this.#io.stdout.write(`${text}\n`);
  }

  /** Writes one JSON document to stdout (what `--json` prints). */
  json(value: unknown): void {
    this.#io.stdout.write(`${JSON.stringify(value, jsonReplacer, 2)}\n`);
  }

  /** Writes `text` and a newline to stderr (notes and warnings, never data). */
  note(text: string): void {
    this.#io.stderr.write(`${text}\n`);
  }
}

function jsonReplacer(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}
