import type { AttemptRecord, JobLogRecord, JobRecord } from "@stint/core";
import { DashboardErrorCode, RequestRefused } from "../http/request-refused";
import type { DashboardSources } from "./dashboard-sources";
import type { PayloadPolicy, ShownPayload } from "./payload-policy";

/** One job as its page shows it, every text already redacted. */
export interface JobDetail {
  readonly job: JobRecord;
  readonly payload: ShownPayload;
  readonly attempts: readonly AttemptRecord[];
  /** The `ctx.log` lines of each attempt that logged, messages and fields scrubbed. */
  readonly logs: readonly ShownJobLog[];
  /** `last_error`, the result, meta and progress with the job's secret values replaced. */
  readonly lastError: string | null;
  readonly resultText: string | null;
  readonly metaText: string | null;
  readonly progressText: string | null;
}

/** One attempt's `ctx.log` lines as the page shows them. */
export interface ShownJobLog {
  readonly attempt: number;
  readonly droppedLines: number;
  readonly lines: readonly { readonly at: Date; readonly message: string; readonly fieldsText: string | null }[];
}

const JOB_ID = /^[1-9][0-9]{0,18}$/;

/**
 * Reads a job, its attempts and its handler's log lines; a 404 when there is no such job (or the
 * id cannot be one). Errors, stacks, the result, meta and progress are
 * scrubbed of the job's secret values, as the logs are.
 */
export async function readJobDetail(sources: DashboardSources, policy: PayloadPolicy, id: string): Promise<JobDetail> {
  if (!JOB_ID.test(id) || BigInt(id) > 9_223_372_036_854_775_807n) throw noSuchJob(id);
  const [job, attempts, logs] = await Promise.all([
    sources.store.getJob({ id }),
    sources.store.listAttempts({ jobId: id }),
    sources.store.listJobLogs({ jobId: id }),
  ]);
  if (job === undefined) throw noSuchJob(id);
  const scrub = policy.scrubberFor(job.queue, job.payload);
  const jsonText = (value: unknown): string | null => (value === null || value === undefined ? null : scrub(JSON.stringify(value, null, 2)));
  const scrubbed = attempts.map((attempt) =>
    attempt.error === null
      ? attempt
      : Object.freeze({
          ...attempt,
          error: Object.freeze({
            message: attempt.error.message === null ? null : scrub(attempt.error.message),
            code: attempt.error.code,
            stack: attempt.error.stack === null ? null : scrub(attempt.error.stack),
          }),
        }),
  );
  return Object.freeze({
    job,
    payload: policy.payload(job.queue, job.payload),
    attempts: Object.freeze(scrubbed),
    logs: Object.freeze(logs.map((log) => shownLog(log, scrub))),
    lastError: job.lastError === null ? null : scrub(job.lastError),
    resultText: jsonText(job.result),
    metaText: Object.keys(job.meta).length === 0 ? null : jsonText(job.meta),
    progressText: jsonText(job.progress),
  });
}

function shownLog(log: JobLogRecord, scrub: (text: string) => string): ShownJobLog {
  return Object.freeze({
    attempt: log.attempt,
    droppedLines: log.droppedLines,
    lines: Object.freeze(
      log.lines.map((line) =>
        Object.freeze({ at: line.at, message: scrub(line.message), fieldsText: line.fields === null ? null : scrub(JSON.stringify(line.fields)) }),
      ),
    ),
  });
}

/** The 404 of a job id that names no job. */
export function noSuchJob(id: string): RequestRefused {
  return new RequestRefused(DashboardErrorCode.NotFound, `There is no job ${id.length > 40 ? `${id.slice(0, 40)}…` : id}.`);
}
