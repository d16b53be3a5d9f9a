import {
  defineJob,
  DEFAULT_MAX_PAYLOAD_BYTES,
  ExitCode,
  type DedupeMode,
  type EnqueueOptions,
  type JobDefinition,
  MIN_PRIORITY,
  MAX_PRIORITY,
  MAX_ATTEMPTS,
  MAX_TIMEOUT_MS,
} from "@stint/core";
import { MAX_EXPIRE_IN_MS, MAX_UNIQUE_FOR_MS } from "@stint/core/internal";
import { assertPayloadFitsSchema, buildNewJob, type NewJob } from "@stint/core/driver";
import { appJobKind } from "../app/app-job-kind";
import { appModuleOption } from "../app/app-option";
import { durationOption } from "../args/duration";
import { asFlagError } from "../args/flag-error";
import { integerValue, timeValue } from "../args/option-values";
import { usageError } from "../cli-error";
import { flagOption, stringOption, type Command, type CommandContext } from "../command";
import type { Connection } from "../connection/open-connection";
import { NDJSON_LINE_SLACK_BYTES } from "../input/ndjson-lines";
import { openInput } from "../input/open-input";
import { assertQueueInUse } from "../input/queue-in-use";
import { parsePayload, spoolPayloads } from "../input/spool-payloads";
import { SpoolFile } from "../input/spool-file";
import { INTERRUPTED, writeSpooledJobs } from "../input/write-spooled-jobs";
import { formatCount } from "../output/table";
import { humanDuration } from "../output/time-text";

/** The CLI flag of each enqueue option, for messages. */
const FLAGS: Readonly<Record<string, string>> = {
  runAt: "--run-at",
  delayMs: "--delay",
  priority: "--priority",
  maxAttempts: "--max-attempts",
  timeoutMs: "--timeout",
  dedupeKey: "--dedupe-key",
  dedupe: "--dedupe",
  unique: "--unique-key",
  "unique.key": "--unique-key",
  "unique.forMs": "--unique-for",
  startBy: "--start-by",
  expireInMs: "--expire-in",
  group: "--group",
  serialKey: "--serial-key",
  serialOnDead: "--serial-on-dead",
};

/**
 * `stint enqueue`: adds one job from a JSON payload on the command line, or
 * one job per line of NDJSON (`--file PATH`, or `--file -` for stdin). The
 * input is read once: every line is validated and spooled to a private
 * temporary file, then the rows are written 1,000 per statement in one
 * transaction that commits only when the count written equals the count
 * validated, so a run enqueues every line or none. Rows are built by core's
 * `buildNewJob` from the job kind (the app's, with `--app`), after the
 * kind's schema (when its `defineJob` has one) accepted the payload, so the
 * checks are those of the library's `JobClient.enqueue`.
 */
export const enqueueCommand: Command = {
  name: "enqueue",
  summary: "Add a job (or one per line of an NDJSON file) to a queue",
  usage: [
    "enqueue <queue> <json> [--app MODULE | --force] [--run-at ISO] [--delay 30s] [--priority N] [--max-attempts N] [--timeout 30s] [--dedupe-key K [--dedupe keep|replace|debounce] | --unique-key K --unique-for 1h] [--expire-in 5m | --start-by ISO] [--group K | --serial-key K [--serial-on-dead hold|release]] [--meta JSON]",
    "enqueue <queue> --file PATH|- [--app MODULE | --force] [--run-at ISO] [--delay 30s] [--priority N] [--max-attempts N] [--timeout 30s] [--expire-in 5m | --start-by ISO] [--group K | --serial-key K] [--meta JSON]",
  ],
  args: { min: 1, max: 2 },
  json: true,
  options: {
    "run-at": { type: "string", value: "ISO", description: "run at this time, e.g. 2030-01-31T09:00:00Z (default: now)" },
    delay: { type: "string", value: "DURATION", description: "run this long from now (after --run-at when both are given)" },
    priority: { type: "string", value: "N", description: "higher runs first, -32768 to 32767 (default: the kind's, else 0)" },
    "max-attempts": { type: "string", value: "N", description: "attempts before the job is dead (default: the kind's, else 25)" },
    timeout: { type: "string", value: "DURATION", description: "time limit of each attempt (default: the kind's, else none)" },
    "dedupe-key": { type: "string", value: "KEY", description: "while an active job of the queue holds KEY, return it instead" },
    dedupe: {
      type: "string",
      value: "MODE",
      description:
        "with --dedupe-key: keep the active job (default), replace a queued one's payload and run time, or debounce (replace, run --delay after the last enqueue)",
    },
    "unique-key": {
      type: "string",
      value: "KEY",
      description: "with --unique-for: return the job enqueued with KEY within the window, even if it has finished, instead of adding one",
    },
    "unique-for": { type: "string", value: "DURATION", description: "how long the window of --unique-key lasts, from its first enqueue" },
    "expire-in": { type: "string", value: "DURATION", description: "cancel the job (STINT_EXPIRED) if no attempt has started this long after its run time" },
    "start-by": { type: "string", value: "ISO", description: "cancel the job (STINT_EXPIRED) if no attempt has started by this time" },
    group: { type: "string", value: "KEY", description: "the job's group (a tenant): claims take turns among groups; with --file, for every job" },
    "serial-key": {
      type: "string",
      value: "KEY",
      description: "jobs of the queue with KEY run one at a time, in enqueue order; with --file, every line in file order",
    },
    "serial-on-dead": {
      type: "string",
      value: "MODE",
      description: "with --serial-key: a job that dies holds its line until retried or released (hold, default) or lets it go on (release)",
    },
    meta: { type: "string", value: "JSON", description: "a JSON object kept with the job (ctx.meta), at most 8 KiB; with --file, for every job" },
    file: { type: "string", value: "PATH", description: "enqueue one job per line of this NDJSON file; - reads stdin" },
    app: { type: "string", value: "MODULE", description: "take the job kind's defaults from this app module (default: $STINT_APP)" },
    force: { type: "boolean", description: "enqueue to a queue that is not known (see the notes above)" },
  },
  notes: [
    "With --app (or $STINT_APP), the queue must have a worker in the app: its job kind gives the defaults",
    "(max attempts, timeout, priority) and the payload size limit; options given here override them. When",
    "its defineJob has a schema, every payload must pass it: a payload (or any line of --file) it rejects is",
    "a usage error (exit 2) with the validator's messages, and nothing is enqueued.",
    "Without it, stint's defaults apply, and a queue with no jobs and no schedule in the database is refused",
    "as probably misspelt. Either way, --force enqueues to an unknown queue with stint's defaults.",
    "",
    "A payload must come back from JSON as given: Maps, Sets, Dates, binary data, class instances, sparse",
    "arrays and nesting deeper than 64 levels are refused. An NDJSON line may be at most the payload limit",
    `(1 MiB unless the kind says otherwise) plus ${NDJSON_LINE_SLACK_BYTES / 1024} KiB. A bad line is a usage error (exit 2) naming the line;`,
    "nothing is enqueued then, nor when the run is interrupted (exit 130).",
    "",
    "Examples:",
    `  stint enqueue send-invoice '{"invoiceId": 812}' --dedupe-key invoice:812`,
    "  stint enqueue weekly-report '{}' --delay 1h30m --priority 5 --app ./dist/stint-app.js",
    `  stint enqueue rebuild-search '{"documentId": 7}' --dedupe-key doc:7 --dedupe debounce --delay 30s`,
    `  stint enqueue send-digest '{"userId": 7}' --unique-key digest:7 --unique-for 1h`,
    `  stint enqueue send-push '{"userId": 7}' --expire-in 5m`,
    `  stint enqueue send-invoice '{"invoiceId": 812}' --meta '{"tenant": "acme"}'`,
    `  stint enqueue sync-mailbox '{"mailboxId": 7}' --group tenant:acme`,
    "  stint enqueue post-ledger-entry --file entries.ndjson --serial-key account:42",
    "  stint enqueue send-invoice --file invoices.ndjson",
    "  produce-jobs | stint enqueue send-invoice --file -",
  ],
  async run(context) {
    const [queue, payloadText] = context.positionals as [string, string | undefined];
    const file = stringOption(context, "file");
    if (file !== undefined && payloadText !== undefined) throw usageError("give either a JSON payload or --file, not both");
    if (file === undefined && payloadText === undefined) throw usageError("enqueue: missing the JSON payload (or --file PATH)");
    for (const key of ["dedupe-key", "unique-key"]) {
      if (file !== undefined && stringOption(context, key) !== undefined)
        throw usageError(`--${key} cannot be used with --file: every line would share the key`);
    }
    const options = readEnqueueOptions(context);
    const fallback = defineJob<unknown>(queue);
    const force = flagOption(context, "force");
    const app = appModuleOption(context);
    const kind = app === undefined ? fallback : ((await appJobKind(context, app, queue, force)) ?? fallback);
    // With an app, the app's workers said whether the queue is known; without one, the database does.
    const target: QueueTarget = { kind, options, checkInUse: app === undefined && !force };
    if (payloadText !== undefined) return enqueueOne(context, target, parsePayload(payloadText, "payload"));
    return enqueueFile(context, target, file!);
  },
};

/** Where and how `stint enqueue` writes: the job kind, the options given, and whether to refuse a queue never seen. */
interface QueueTarget {
  readonly kind: JobDefinition<unknown>;
  readonly options: EnqueueOptions;
  readonly checkInUse: boolean;
}

async function connectToQueue(context: CommandContext, target: QueueTarget): Promise<Connection> {
  const connection = await context.connect();
  if (target.checkInUse) await assertQueueInUse(connection, target.kind.name);
  return connection;
}

function readEnqueueOptions(context: CommandContext): EnqueueOptions {
  const options: { -readonly [K in keyof EnqueueOptions]: EnqueueOptions[K] } = {};
  const runAt = stringOption(context, "run-at");
  if (runAt !== undefined) options.runAt = timeValue("--run-at", runAt);
  const delay = stringOption(context, "delay");
  if (delay !== undefined) options.delayMs = durationOption("--delay", delay);
  const priority = stringOption(context, "priority");
  if (priority !== undefined) options.priority = integerValue("--priority", priority, MIN_PRIORITY, MAX_PRIORITY);
  const maxAttempts = stringOption(context, "max-attempts");
  if (maxAttempts !== undefined) options.maxAttempts = integerValue("--max-attempts", maxAttempts, 1, MAX_ATTEMPTS);
  const timeout = stringOption(context, "timeout");
  if (timeout !== undefined) options.timeoutMs = durationOption("--timeout", timeout, { min: 1, max: MAX_TIMEOUT_MS });
  const dedupeKey = stringOption(context, "dedupe-key");
  if (dedupeKey !== undefined) options.dedupeKey = dedupeKey;
  const dedupe = stringOption(context, "dedupe");
  if (dedupe !== undefined) options.dedupe = dedupe as DedupeMode;
  Object.assign(options, readWindowOptions(context), readGroupOptions(context));
  const meta = stringOption(context, "meta");
  if (meta !== undefined) options.meta = parsePayload(meta, "--meta") as EnqueueOptions["meta"];
  return options;
}

/** `--unique-key`/`--unique-for` and `--expire-in`/`--start-by`: the unique window and the deadline; their values are checked by `buildNewJob`'s store. */
function readWindowOptions(context: CommandContext): Pick<EnqueueOptions, "unique" | "expireInMs" | "startBy"> {
  const uniqueKey = stringOption(context, "unique-key");
  const uniqueFor = stringOption(context, "unique-for");
  if ((uniqueKey === undefined) !== (uniqueFor === undefined)) throw usageError("--unique-key and --unique-for go together");
  const expireIn = stringOption(context, "expire-in");
  const startBy = stringOption(context, "start-by");
  if (expireIn !== undefined && startBy !== undefined) throw usageError("give the deadline one way: --expire-in or --start-by, not both");
  return {
    ...(uniqueKey === undefined ? {} : { unique: { key: uniqueKey, forMs: durationOption("--unique-for", uniqueFor!, { min: 1, max: MAX_UNIQUE_FOR_MS }) } }),
    ...(expireIn === undefined ? {} : { expireInMs: durationOption("--expire-in", expireIn, { min: 1, max: MAX_EXPIRE_IN_MS }) }),
    ...(startBy === undefined ? {} : { startBy: timeValue("--start-by", startBy) }),
  };
}

/** `--group`, `--serial-key` and `--serial-on-dead`; `buildNewJob` checks them together, its messages naming the flags. */
function readGroupOptions(context: CommandContext): Pick<EnqueueOptions, "group" | "serialKey" | "serialOnDead"> {
  const group = stringOption(context, "group");
  const serialKey = stringOption(context, "serial-key");
  const serialOnDead = stringOption(context, "serial-on-dead");
  if (serialOnDead !== undefined && serialOnDead !== "hold" && serialOnDead !== "release")
    throw usageError(`--serial-on-dead must be hold or release, got ${JSON.stringify(serialOnDead)}`);
  return {
    ...(group === undefined ? {} : { group }),
    ...(serialKey === undefined ? {} : { serialKey }),
    ...(serialOnDead === undefined ? {} : { serialOnDead }),
  };
}

/** `buildNewJob`, with its option names turned into the CLI's flags. */
function buildRow(kind: JobDefinition<unknown>, payload: unknown, options: EnqueueOptions): NewJob {
  try {
    return buildNewJob(kind, payload, options);
  } catch (thrown) {
    throw asFlagError(thrown, FLAGS);
  }
}

async function enqueueOne(context: CommandContext, target: QueueTarget, payload: unknown): Promise<number> {
  // A PayloadSchemaError is a usage error (exit 2) naming each field, as explainFailure says.
  await assertPayloadFitsSchema(target.kind.name, target.kind.schema, payload);
  const row = buildRow(target.kind, payload, target.options);
  const queue = target.kind.name;
  const { store } = await connectToQueue(context, target);
  // The store checks the values buildNewJob leaves to it (the unique key, …): its errors name the flags too.
  const result = await store.enqueue(row).catch((thrown: unknown) => {
    throw asFlagError(thrown, FLAGS);
  });
  if (context.json) {
    context.out.json({ queue, id: result.id, duplicate: result.duplicate, ...(result.replaced === true ? { replaced: true } : {}) });
  } else if (result.replaced === true) {
    context.out.line(`Replaced the payload and run time of queued job ${result.id} of ${queue} (dedupe key ${JSON.stringify(row.dedupeKey)}).`);
  } else if (result.duplicate && row.unique != null) {
    context.out.line(`Not enqueued: job ${result.id} of ${queue} holds the unique window of key ${JSON.stringify(row.unique.key)}.`);
  } else if (result.duplicate) {
    context.out.line(`Not enqueued: job ${result.id} of ${queue} is active with dedupe key ${JSON.stringify(row.dedupeKey)}.`);
  } else {
    context.out.line(`Enqueued job ${result.id} on ${queue}.`);
  }
  return ExitCode.Ok;
}

/** `--file`: read once into a spool, then written all or nothing (see the command's doc comment). */
async function enqueueFile(context: CommandContext, target: QueueTarget, file: string): Promise<number> {
  const queue = target.kind.name;
  const template = buildRow(target.kind, {}, target.options);
  const maxPayloadBytes = target.kind.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
  const connection = await connectToQueue(context, target);
  const input = await openInput(context, file);
  const spool = await SpoolFile.create();
  const started = Date.now();
  let counts = { enqueued: 0, duplicates: 0 };
  let interrupted: boolean;
  try {
    interrupted = !(await spoolPayloads(spool, input.bytes, input.shown, target.kind, context.signal));
    if (!interrupted) {
      const written = await writeSpooledJobs(context, connection, spool, template, maxPayloadBytes);
      if (written === INTERRUPTED) interrupted = true;
      else counts = written;
    }
  } finally {
    input.close();
    await spool.remove();
  }
  const total = spool.count;
  const durationMs = Date.now() - started;
  if (context.json) {
    context.out.json({ queue, file: input.shown, lines: total, ...counts, interrupted, durationMs });
  } else if (interrupted) {
    context.out.line(`Interrupted: nothing enqueued on ${queue} from ${input.shown} (${formatCount(total)} lines read).`);
  } else {
    const duplicates = counts.duplicates === 0 ? "" : ` ${formatCount(counts.duplicates)} matched active jobs by dedupe key.`;
    const jobs = counts.enqueued === 1 ? "job" : "jobs";
    context.out.line(`Enqueued ${formatCount(counts.enqueued)} ${jobs} on ${queue} from ${input.shown} in ${humanDuration(durationMs)}.${duplicates}`);
  }
  return interrupted ? ExitCode.Interrupted : ExitCode.Ok;
}
