import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import type { RunReport } from "@stint/core";

/** What one probe worker process printed when it exited. */
export interface ProbeProcessReport {
  readonly report: RunReport;
  readonly maxRssBytes: number;
}

/** Where and how a probe process runs. */
export interface ProbeProcessOptions {
  readonly connectionString: string;
  readonly schema: string;
  readonly concurrency: number;
  /** Record every handler run in `<schema>.executions`. */
  readonly recordExecutions?: boolean;
  /** More environment (MODE, MAX_RUNTIME_MS, PROBE_SLEEP_MS, …; see probe-worker-process). */
  readonly env?: Readonly<Record<string, string>>;
}

/** A running probe process and how it ended. */
export interface ProbeProcess {
  readonly child: ChildProcess;
  /** Lines it wrote to standard output so far: at the end, its report. */
  readonly lines: string[];
  /** Lines it wrote to standard error so far: its logs. */
  readonly logLines: string[];
  readonly exited: Promise<{
    readonly code: number | null;
    readonly signal: NodeJS.Signals | null;
    readonly stderr: string;
    readonly report?: ProbeProcessReport;
  }>;
}

/**
 * Starts one real OS process running the probe worker.
 *
 * @example
 * ```ts
 * const probe = startProbeProcess({ connectionString, schema, concurrency: 4, env: { MODE: "loop" } });
 * probe.child.kill("SIGTERM");
 * const { code } = await probe.exited;
 * ```
 */
export function startProbeProcess(options: ProbeProcessOptions): ProbeProcess {
  const script = join(__dirname, "probe-worker-process.js");
  const env = {
    ...process.env,
    DATABASE_URL: options.connectionString,
    STINT_SCHEMA: options.schema,
    PROBE_CONCURRENCY: String(options.concurrency),
    RECORD_EXECUTIONS: options.recordExecutions ? "1" : "0",
    ...options.env,
  };
  const child = spawn(process.execPath, [script], { env, stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  const logLines: string[] = [];
  const flushStdout = collectLines(child.stdout, lines);
  const flushStderr = collectLines(child.stderr, logLines);
  const exited = new Promise<Awaited<ProbeProcess["exited"]>>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      flushStdout();
      flushStderr();
      const last = lines.at(-1);
      let report: ProbeProcessReport | undefined;
      try {
        const parsed = last === undefined ? undefined : (JSON.parse(last) as Partial<ProbeProcessReport>);
        if (parsed?.report !== undefined) report = parsed as ProbeProcessReport;
      } catch {
        report = undefined;
      }
      resolve({ code, signal, stderr: logLines.join("\n"), ...(report === undefined ? {} : { report }) });
    });
  });
  return { child, lines, logLines, exited };
}

/** Appends each complete line `stream` writes to `into`; the returned function adds the unfinished last one. */
function collectLines(stream: NodeJS.ReadableStream, into: string[]): () => void {
  let partial = "";
  stream.on("data", (chunk: Buffer) => {
    const parts = (partial + chunk.toString()).split("\n");
    partial = parts.pop() ?? "";
    into.push(...parts.filter((line) => line !== ""));
  });
  return () => {
    if (partial !== "") into.push(partial);
    partial = "";
  };
}

/**
 * Starts `processes` probe processes in once mode over one schema and
 * resolves with each one's report once all have exited; rejects if any
 * exits non-zero.
 *
 * @example
 * ```ts
 * const reports = await spawnProbeWorkers({ connectionString, schema, processes: 4, concurrency: 4 });
 * ```
 */
export async function spawnProbeWorkers(options: ProbeProcessOptions & { readonly processes: number }): Promise<readonly ProbeProcessReport[]> {
  const runs = Array.from({ length: options.processes }, () => startProbeProcess(options));
  return Promise.all(
    runs.map(async (run) => {
      const { code, signal, stderr, report } = await run.exited;
      if (code !== 0 || report === undefined) throw new Error(`probe worker ${run.child.pid} exited with ${code ?? signal}: ${stderr.trim()}`);
      return report;
    }),
  );
}
