import { createReadStream } from "node:fs";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import {
  buildNewJob,
  defineJob,
  ErrorCode,
  ExitCode,
  hasErrorCode,
  type EnqueueOptions,
  type JobDefinition,
  type JobStore,
  type NewJob,
} from "@stint/core";
import { durationOption } from "../args/duration";
import { integerValue, timeValue } from "../args/option-values";
import { CliError, configError, usageError } from "../cli-error";
import { stringOption, type Command, type CommandContext } from "../command";
import { startProgress } from "../output/progress";
import { formatCount } from "../output/table";
import { humanDuration } from "../output/time-text";

/** Rows per `enqueueMany` statement with `--file`. */
export const ENQUEUE_BATCH_SIZE = 1_000;

/** The CLI flag of each enqueue option, for messages. */
const FLAGS: Readonly<Record<string, string>> = {
  runAt: "--run-at",
  delayMs: "--delay",
  priority: "--priority",
  maxAttempts: "--max-attempts",
  timeoutMs: "--timeout",
  dedupeKey: "--dedupe-key",
};

/**
 * `stint enqueue`: adds one job from a JSON payload on the command line, or
 * one job per line of an NDJSON file (validated in full before the first
 * insert, then written 1,000 rows per statement). Rows are built by core's
 * `buildNewJob`, so the checks are those of the library.
 */
export const enqueueCommand: Command = {
  name: "enqueue",
  summary: "Add a job (or one per line of an NDJSON file) to a queue",
  usage: [
    "enqueue <queue> <json> [--run-at ISO] [--delay 30s] [--priority N] [--max-attempts N] [--timeout 30s] [--dedupe-key K]",
    "enqueue <queue> --file jobs.ndjson [--run-at ISO] [--delay 30s] [--priority N] [--max-attempts N] [--timeout 30s]",
  ],
  args: { min: 1, max: 2 },
  json: true,
  options: {
    "run-at": { type: "string", value: "ISO", description: "run at this time, e.g. 2030-01-31T09:00:00Z (default: now)" },
    delay: { type: "string", value: "DURATION", description: "run this long from now (after --run-at when both are given)" },
    priority: { type: "string", value: "N", description: "higher runs first, -32768 to 32767 (default 0)" },
    "max-attempts": { type: "string", value: "N", description: "attempts before the job is dead (default 25)" },
    timeout: { type: "string", value: "DURATION", description: "time limit of each attempt (default: none)" },
    "dedupe-key": { type: "string", value: "KEY", description: "while an active job of the queue holds KEY, return it instead" },
    file: { type: "string", value: "PATH", description: "enqueue one job per line of this NDJSON file (one JSON payload a line)" },
  },
  notes: [
    "The job kind's defaults in your code are not known here: give --max-attempts and --timeout when they matter.",
    "A payload that is not valid JSON is a usage error (exit 2); the message names the line and position.",
    "",
    "Examples:",
    `  stint enqueue send-invoice '{"invoiceId": 812}' --dedupe-key invoice:812`,
    "  stint enqueue weekly-report '{}' --delay 1h30m --priority 5",
    "  stint enqueue send-invoice --file invoices.ndjson",
  ],
  async run(context) {
    const [queue, payloadText] = context.positionals as [string, string | undefined];
    const file = stringOption(context, "file");
    if (file !== undefined && payloadText !== undefined) throw usageError("give either a JSON payload or --file, not both");
    if (file === undefined && payloadText === undefined) throw usageError("enqueue: missing the JSON payload (or --file PATH)");
    if (file !== undefined && stringOption(context, "dedupe-key") !== undefined) {
      throw usageError("--dedupe-key cannot be used with --file: every line would share the key");
    }
    const kind = defineJob<unknown>(queue);
    const options = readEnqueueOptions(context);
    if (payloadText !== undefined) return enqueueOne(context, kind.name, buildRow(kind, parsePayload(payloadText, "payload"), options));
    return enqueueFile(context, kind.name, file!, (payload) => buildRow(kind, payload, options));
  },
};

function readEnqueueOptions(context: CommandContext): EnqueueOptions {
  const options: { -readonly [K in keyof EnqueueOptions]: EnqueueOptions[K] } = {};
  const runAt = stringOption(context, "run-at");
  if (runAt !== undefined) options.runAt = timeValue("--run-at", runAt);
  const delay = stringOption(context, "delay");
  if (delay !== undefined) options.delayMs = durationOption("--delay", delay);
  const priority = stringOption(context, "priority");
  if (priority !== undefined) options.priority = integerValue("--priority", priority, -32_768, 32_767);
  const maxAttempts = stringOption(context, "max-attempts");
  if (maxAttempts !== undefined) options.maxAttempts = integerValue("--max-attempts", maxAttempts, 1, 1_000);
  const timeout = stringOption(context, "timeout");
  if (timeout !== undefined) options.timeoutMs = durationOption("--timeout", timeout, { min: 1, max: 2_147_483_647 });
  const dedupeKey = stringOption(context, "dedupe-key");
  if (dedupeKey !== undefined) options.dedupeKey = dedupeKey;
  return options;
}

/** `buildNewJob`, with its option names turned into the CLI's flags. */
function buildRow(kind: JobDefinition<unknown>, payload: unknown, options: EnqueueOptions): NewJob {
  try {
    return buildNewJob(kind, payload, options);
  } catch (thrown) {
    if (hasErrorCode(thrown, ErrorCode.Config)) {
      const option = (thrown as { option?: string }).option ?? "";
      const problem = (thrown as Error).message.replace(/^Invalid option `[^`]*`: /, "");
      throw configError(`${FLAGS[option] ?? option} ${problem}`, thrown);
    }
    throw thrown;
  }
}

function parsePayload(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (thrown) {
    throw new CliError(ExitCode.Usage, `${where}: invalid JSON: ${(thrown as Error).message}`, { cause: thrown });
  }
}

async function enqueueOne(context: CommandContext, queue: string, row: NewJob): Promise<number> {
  const { store } = await context.connect();
  const result = await store.enqueue(row);
  if (context.json) {
    context.out.json({ queue, id: result.id, duplicate: result.duplicate });
  } else if (result.duplicate) {
    context.out.line(`Not enqueued: job ${result.id} of ${queue} is active with dedupe key ${JSON.stringify(row.dedupeKey)}.`);
  } else {
    context.out.line(`Enqueued job ${result.id} on ${queue}.`);
  }
  return ExitCode.Ok;
}

async function enqueueFile(context: CommandContext, queue: string, file: string, build: (payload: unknown) => NewJob): Promise<number> {
  const path = resolve(context.cwd, file);
  // First pass: every line must be valid before anything is inserted.
  let total = 0;
  for await (const { line, text } of payloadLines(path, file)) {
    const where = `${file} line ${line}`;
    const payload = parsePayload(text, where);
    try {
      build(payload);
    } catch (thrown) {
      if (!hasErrorCode(thrown, ErrorCode.Payload)) throw thrown;
      throw new CliError(ExitCode.Usage, `${where}: ${(thrown as Error).message}`, { cause: thrown });
    }
    total += 1;
  }
  const { store } = await context.connect();
  const started = Date.now();
  const progress = startProgress(context.io.stderr, { label: `enqueue ${queue}`, total, unit: "jobs" });
  const counts = { enqueued: 0, duplicates: 0 };
  let batch: NewJob[] = [];
  let interrupted = false;
  try {
    for await (const { text } of payloadLines(path, file)) {
      batch.push(build(JSON.parse(text)));
      if (batch.length < ENQUEUE_BATCH_SIZE) continue;
      await writeBatch(store, batch, counts);
      batch = [];
      progress.update(counts.enqueued + counts.duplicates);
      if (context.signal.aborted) {
        interrupted = true;
        break;
      }
    }
    if (!interrupted && batch.length > 0) await writeBatch(store, batch, counts);
    progress.update(counts.enqueued + counts.duplicates);
  } finally {
    progress.stop();
  }
  const durationMs = Date.now() - started;
  if (context.json) {
    context.out.json({ queue, file, lines: total, ...counts, interrupted, durationMs });
  } else {
    const duplicates = counts.duplicates === 0 ? "" : ` ${formatCount(counts.duplicates)} matched active jobs by dedupe key.`;
    const verb = interrupted ? `Interrupted after enqueueing ${formatCount(counts.enqueued)} of ${formatCount(total)}` : `Enqueued ${formatCount(counts.enqueued)}`;
    context.out.line(`${verb} jobs on ${queue} from ${file} in ${humanDuration(durationMs)}.${duplicates}`);
  }
  return interrupted ? ExitCode.Interrupted : ExitCode.Ok;
}

async function writeBatch(store: JobStore, batch: readonly NewJob[], counts: { enqueued: number; duplicates: number }): Promise<void> {
  const results = await store.enqueueMany(batch);
  for (const result of results) {
    if (result.duplicate) counts.duplicates += 1;
    else counts.enqueued += 1;
  }
}

/** The non-blank lines of an NDJSON file with their line numbers. */
async function* payloadLines(path: string, shown: string): AsyncGenerator<{ line: number; text: string }> {
  const stream = createReadStream(path, { encoding: "utf8" });
  const opened = new Promise<void>((resolveOpen, reject) => {
    stream.once("ready", () => resolveOpen());
    stream.once("error", reject);
  });
  try {
    await opened;
  } catch (thrown) {
    throw new CliError(ExitCode.Usage, `cannot read ${shown}: ${(thrown as Error).message}`, { cause: thrown });
  }
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const text of lines) {
      line += 1;
      if (text.trim() !== "") yield { line, text };
    }
  } finally {
    lines.close();
    stream.destroy();
  }
}
