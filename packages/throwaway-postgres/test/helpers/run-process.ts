import { spawn, type ChildProcess } from "node:child_process";

/** How a process ended and what it wrote. */
export interface ProcessResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Where and how to run it. */
export interface RunProcessOptions {
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** Killed (SIGKILL) after this long; the result then says so through `signal`. */
  readonly timeoutMs: number;
  /** Called once the process runs, e.g. to signal it. */
  readonly onStart?: (child: ChildProcess) => void;
}

/**
 * Runs a process to its end and resolves with its exit code or signal and
 * its output; a failure to spawn rejects.
 *
 * @example
 * const { code, stderr } = await runProcess("node", ["scripts/with-postgres.mjs", "true"], { cwd, env, timeoutMs: 60_000 });
 */
export function runProcess(command: string, args: readonly string[], options: RunProcessOptions): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args], { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    options.onStart?.(child);
  });
}
