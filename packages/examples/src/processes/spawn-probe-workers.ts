import { spawn } from "node:child_process";
import { join } from "node:path";
import type { RunSummary } from "@stint/core";

/** What one probe worker process printed when it exited. */
export interface ProbeProcessReport {
  readonly summary: RunSummary;
  readonly maxRssBytes: number;
}

/** Options of {@link spawnProbeWorkers}. */
export interface SpawnProbeWorkersOptions {
  readonly connectionString: string;
  readonly schema: string;
  readonly processes: number;
  readonly concurrency: number;
  /** Record every handler run in `<schema>.executions`. */
  readonly recordExecutions?: boolean;
}

/**
 * Starts `processes` real OS processes running {@link ProbeWorker} over one
 * schema and resolves with each one's report once all have exited; rejects
 * if any exits non-zero.
 *
 * @example
 * ```ts
 * const reports = await spawnProbeWorkers({ connectionString, schema, processes: 4, concurrency: 4 });
 * ```
 */
export function spawnProbeWorkers(options: SpawnProbeWorkersOptions): Promise<readonly ProbeProcessReport[]> {
  const script = join(__dirname, "probe-worker-process.js");
  const env = {
    ...process.env,
    DATABASE_URL: options.connectionString,
    STINT_SCHEMA: options.schema,
    CONCURRENCY: String(options.concurrency),
    RECORD_EXECUTIONS: options.recordExecutions ? "1" : "0",
  };
  const runs = Array.from({ length: options.processes }, () => runProcess(script, env));
  return Promise.all(runs);
}

function runProcess(script: string, env: NodeJS.ProcessEnv): Promise<ProbeProcessReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (code !== 0) return reject(new Error(`probe worker ${child.pid} exited with ${code ?? signal}: ${stderr.trim()}`));
      const line = stdout.trim().split("\n").pop() ?? "";
      try {
        resolve(JSON.parse(line) as ProbeProcessReport);
      } catch {
        reject(new Error(`probe worker ${child.pid} printed no report: ${stdout}${stderr}`));
      }
    });
  });
}
