import { spawn, type ChildProcess } from "node:child_process";

/** How a child process ended. */
export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** `Date.now()` when it was reaped. */
  readonly at: number;
}

/** Keeps at most this many lines of each of a child's output streams. */
const MAX_LINES = 5_000;

/** How many of the last lines of standard error {@link ChildNode.stderr} shows. */
const STDERR_TAIL_LINES = 40;

/** Every child still running, so an interrupted suite can take them down. */
const LIVE = new Set<ChildNode>();

/** SIGKILLs every child process the suite started that is still running (on Ctrl-C). */
export function killAllChildren(): void {
  for (const node of LIVE) node.kill("SIGKILL");
}

/**
 * A real OS process running a Node script, with its standard output split
 * into lines (JSON events), its standard error into lines (JSON logs: the
 * harness sets `STINT_LOG_FORMAT=json`) and its end as a promise.
 */
export class ChildNode {
  readonly child: ChildProcess;
  readonly startedAt = Date.now();
  /** The last lines it wrote to standard output. */
  readonly lines: string[] = [];
  /** The last lines it wrote to standard error: its logs, and a crash's stack. */
  readonly logLines: string[] = [];
  readonly exited: Promise<ChildExit>;
  #exit: ChildExit | undefined;
  readonly #listeners: ((event: Record<string, unknown>) => void)[] = [];

  constructor(script: string, env: Readonly<Record<string, string>>, options: { readonly stdin?: boolean } = {}) {
    this.child = spawn(process.execPath, [script], {
      env: { ...process.env, STINT_LOG_FORMAT: "json", ...env },
      stdio: [options.stdin ? "pipe" : "ignore", "pipe", "pipe"],
    });
    LIVE.add(this);
    const flushStdout = splitLines(this.child.stdout!, (line) => this.#line(line));
    const flushStderr = splitLines(this.child.stderr!, (line) => keepLast(this.logLines, line));
    this.exited = new Promise((resolve) => {
      this.child.on("error", (error) => {
        keepLast(this.logLines, String(error));
      });
      this.child.on("close", (code, signal) => {
        flushStdout();
        flushStderr();
        this.#exit = { code, signal, at: Date.now() };
        LIVE.delete(this);
        resolve(this.#exit);
      });
    });
  }

  /** The last lines of standard error, for a failure's message. */
  get stderr(): string {
    return this.logLines.slice(-STDERR_TAIL_LINES).join("\n");
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** True until the process has been reaped. */
  get alive(): boolean {
    return this.#exit === undefined;
  }

  /** Resolves with the first JSON event line whose `event` field is `name`. */
  event(name: string, timeoutMs: number): Promise<Record<string, unknown>> {
    const seen = this.lines.map(parseJson).find((event) => event?.["event"] === name);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`process ${this.pid} printed no "${name}" event within ${timeoutMs} ms: ${this.stderr.trim()}`)),
        timeoutMs,
      );
      const listener = (event: Record<string, unknown>): void => {
        if (event["event"] !== name) return;
        clearTimeout(timer);
        this.#listeners.splice(this.#listeners.indexOf(listener), 1);
        resolve(event);
      };
      this.#listeners.push(listener);
      void this.exited.then(() => {
        clearTimeout(timer);
        const index = this.#listeners.indexOf(listener);
        if (index >= 0) {
          this.#listeners.splice(index, 1);
          reject(new Error(`process ${this.pid} exited before printing "${name}": ${this.stderr.trim()}`));
        }
      });
    });
  }

  /** Sends a signal (no-op once the process is gone). */
  kill(signal: NodeJS.Signals): void {
    if (this.alive) this.child.kill(signal);
  }

  /** Writes one line to its standard input. */
  send(line: string): void {
    this.child.stdin?.write(`${line}\n`);
  }

  #line(line: string): void {
    keepLast(this.lines, line);
    const event = line.startsWith('{"event"') ? parseJson(line) : undefined;
    if (event !== undefined) for (const listener of [...this.#listeners]) listener(event);
  }
}

/** Calls `onLine` with each non-empty line `stream` writes; the returned function flushes an unfinished last line. */
function splitLines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): () => void {
  let partial = "";
  stream.on("data", (chunk: Buffer) => {
    const parts = (partial + chunk.toString()).split("\n");
    partial = parts.pop() ?? "";
    for (const line of parts) if (line !== "") onLine(line);
  });
  return () => {
    if (partial !== "") onLine(partial);
    partial = "";
  };
}

function keepLast(lines: string[], line: string): void {
  lines.push(line);
  if (lines.length > MAX_LINES) lines.splice(0, lines.length - MAX_LINES);
}

function parseJson(line: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(line) as unknown;
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
