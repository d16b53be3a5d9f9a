import { DEFAULT_MAX_PAYLOAD_BYTES, ErrorCode, ExitCode, hasErrorCode, type JobDefinition } from "@stint/core";
import { assertPayloadFitsSchema, serializePayload } from "@stint/core/driver";
import { CliError } from "../cli-error";
import { NDJSON_LINE_SLACK_BYTES, ndjsonLines } from "./ndjson-lines";
import type { SpoolFile } from "./spool-file";
import { untilAborted } from "./until-aborted";

/**
 * Parses one JSON payload given on the command line or on a line of
 * `--file`; invalid JSON is a usage error (exit 2) naming `where`.
 *
 * @example
 * ```ts
 * parsePayload('{"invoiceId": 812}', "payload"); // { invoiceId: 812 }
 * ```
 */
export function parsePayload(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (thrown) {
    throw new CliError(ExitCode.Usage, `${where}: invalid JSON: ${(thrown as Error).message}`, { cause: thrown });
  }
}

/**
 * Reads NDJSON input once (until `signal` aborts), checking every line as
 * `enqueue` checks a payload of `kind` (JSON, the kind's schema when it has
 * one, storable, within the kind's size limit and the nesting limit; lines
 * within the line limit) and appending its payload JSON to `spool`. Resolves to false when
 * interrupted. A bad line is a usage error (exit 2) naming it; nothing has
 * been written to the database then.
 *
 * @example
 * ```ts
 * if (!(await spoolPayloads(spool, input.bytes, "stdin", kind, context.signal))) return ExitCode.Interrupted;
 * ```
 */
export async function spoolPayloads(
  spool: SpoolFile,
  bytes: AsyncIterable<Uint8Array | string>,
  shown: string,
  kind: JobDefinition<unknown>,
  signal: AbortSignal,
): Promise<boolean> {
  const maxPayloadBytes = kind.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
  const lines = ndjsonLines(untilAborted(bytes, signal), maxPayloadBytes + NDJSON_LINE_SLACK_BYTES);
  try {
    for await (const { line, text } of lines) {
      const where = `${shown} line ${line}`;
      const payload = parsePayload(text, where);
      // In the library's order (JobClient.enqueue): the schema first, then what JSON can store.
      await payloadError(where, () => assertPayloadFitsSchema(kind.name, kind.schema, payload));
      await spool.append(await payloadError(where, () => serializePayload(payload, maxPayloadBytes, kind.name)));
      if (signal.aborted) return false;
    }
    if (signal.aborted) return false;
  } catch (thrown) {
    throw hasErrorCode(thrown, ErrorCode.Payload) ? new CliError(ExitCode.Usage, `${shown}: ${(thrown as Error).message}`, { cause: thrown }) : thrown;
  }
  await spool.finish();
  return true;
}

/** Runs `build`, naming `where` in a `PayloadError` (or `PayloadSchemaError`) it throws (as a usage error, exit 2). */
async function payloadError<T>(where: string, build: () => T | Promise<T>): Promise<T> {
  try {
    return await build();
  } catch (thrown) {
    if (!hasErrorCode(thrown, ErrorCode.Payload)) throw thrown;
    throw new CliError(ExitCode.Usage, `${where}: ${(thrown as Error).message}`, { cause: thrown });
  }
}
