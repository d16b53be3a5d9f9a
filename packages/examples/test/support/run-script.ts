import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";

/** How a script's process ended, with everything it wrote. */
export interface ScriptExit {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A script of this package running in a process of its own, its output collected. */
export interface ScriptRun {
  readonly child: ChildProcess;
  /** Resolves with the first line of standard error matching `pattern`; rejects when the process ends without one. */
  stderrLine(pattern: RegExp): Promise<string>;
  readonly exited: Promise<ScriptExit>;
}

/**
 * Starts `dist/src/<script>` with `node`, with only `PATH` and `env` in
 * its environment, standard output and standard error piped apart.
 *
 * @example
 * ```ts
 * const run = startScript("run-queue.js", ["send-invoice-email"], { DATABASE_URL: url });
 * await run.stderrLine(/Started worker/);
 * run.child.kill("SIGTERM");
 * const { code, stdout } = await run.exited;
 * ```
 */
export function startScript(script: string, args: readonly string[], env: Readonly<Record<string, string>>): ScriptRun {
  const child = spawn(process.execPath, [join(__dirname, "..", "..", "src", script), ...args], {
    env: { PATH: process.env["PATH"] ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let ended = false;
  const waiting = new Set<() => void>();
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
    for (const check of waiting) check();
  });
  const exited = new Promise<ScriptExit>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      ended = true;
      for (const check of waiting) check();
      resolve({ code, stdout, stderr });
    });
  });
  const stderrLine = (pattern: RegExp): Promise<string> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const line = stderr.split("\n").find((candidate) => pattern.test(candidate));
        if (line === undefined && !ended) return;
        waiting.delete(check);
        if (line === undefined) reject(new Error(`${script} ended without writing a line matching ${pattern}:\n${stderr}`));
        else resolve(line);
      };
      waiting.add(check);
      check();
    });
  return { child, stderrLine, exited };
}

/**
 * The last line a script wrote to standard output, read as JSON: the
 * summary or report of a run.
 *
 * @example
 * ```ts
 * expect(lastJsonLine(stdout)).to.include({ stoppedBecause: "drained" });
 * ```
 */
export function lastJsonLine(stdout: string): Record<string, unknown> {
  const line = stdout.trimEnd().split("\n").at(-1) ?? "";
  return JSON.parse(line) as Record<string, unknown>;
}
