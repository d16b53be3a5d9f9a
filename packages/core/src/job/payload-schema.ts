import type { StandardSchemaV1 } from "@standard-schema/spec";
import { PayloadSchemaError } from "../errors/config-errors";
import { ParseError } from "../errors/job-errors";
import { childPath } from "./json-value-check";
import { describeIssues, type PayloadIssue } from "./payload-issues";

/**
 * A payload validator: any object implementing Standard Schema v1 (zod,
 * valibot, arktype and others do). `Input` is what `enqueue` accepts,
 * `Output` what the worker's `processItem` gets.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * const schema: PayloadSchema<{ invoiceId: number }> = z.object({ invoiceId: z.number().int().positive() });
 * ```
 */
export type PayloadSchema<Input = unknown, Output = Input> = StandardSchemaV1<Input, Output>;

/** What checking a payload against its schema gave: the validator's value, or its issues. */
export type PayloadCheck<Output> = { readonly ok: true; readonly value: Output } | { readonly ok: false; readonly issues: readonly PayloadIssue[] };

/** Runs a payload through a Standard Schema validator, awaiting it when it is asynchronous. */
export async function checkPayload<Output>(schema: StandardSchemaV1<unknown, Output>, payload: unknown): Promise<PayloadCheck<Output>> {
  const result = await schema["~standard"].validate(payload);
  if (result.issues === undefined) return { ok: true, value: result.value };
  return { ok: false, issues: result.issues.map((issue) => ({ path: issuePath(issue.path), message: String(issue.message) })) };
}

/**
 * At enqueue: resolves when the payload passes its kind's schema (or the
 * kind has none), else rejects with a `PayloadSchemaError` naming each
 * field. `JobClient.enqueue` calls it before building the row; a tool that
 * builds rows itself (`buildNewJob`) calls it first to refuse the same
 * payloads.
 *
 * @example
 * ```ts
 * await assertPayloadFitsSchema(Welcome.name, Welcome.schema, { email: "nope" });
 * // PayloadSchemaError: payload of queue "send-welcome" failed its schema: payload.email: Invalid email address
 * ```
 */
export async function assertPayloadFitsSchema(queue: string, schema: StandardSchemaV1 | undefined, payload: unknown): Promise<void> {
  if (schema === undefined) return;
  const check = await checkPayload(schema, payload);
  if (!check.ok) throw new PayloadSchemaError(queue, check.issues);
}

/** On claim: the schema's output for a stored payload, or a `ParseError` carrying the validator's messages (the job goes to dead). */
export async function parseWithSchema<Output>(schema: StandardSchemaV1<unknown, Output>, payload: unknown): Promise<Output> {
  const check = await checkPayload(schema, payload);
  if (check.ok) return check.value;
  throw new ParseError(`invalid payload: ${describeIssues(check.issues)}`);
}

/** Whether `value` looks like a Standard Schema v1 validator. */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return false;
  const props = (value as { "~standard"?: { version?: unknown; validate?: unknown } })["~standard"];
  return typeof props === "object" && props !== null && props.version === 1 && typeof props.validate === "function";
}

/** `payload.items[3].sku` from a Standard Schema issue path. */
function issuePath(path: StandardSchemaV1.Issue["path"]): string {
  let text = "payload";
  for (const segment of path ?? []) {
    const key = typeof segment === "object" && segment !== null ? segment.key : segment;
    text = typeof key === "number" ? `${text}[${key}]` : childPath(text, String(key));
  }
  return text;
}
