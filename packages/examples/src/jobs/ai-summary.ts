import { defineJob } from "@stint/core";
import { PayloadFields } from "./payload-fields";

/** Payload of an `ai-summary` job: summarise one stored document with a language model. */
export interface AiSummary {
  readonly documentId: number;
  /** Longest summary wanted, in words (default 60). */
  readonly maxWords?: number;
}

/**
 * Summary length when a payload names none.
 *
 * @example
 * ```ts
 * parseAiSummary({ documentId: 7 }).maxWords === DEFAULT_SUMMARY_WORDS; // true
 * ```
 */
export const DEFAULT_SUMMARY_WORDS = 60;

/**
 * The `ai-summary` job kind. Model calls are slow and rate limited, so it
 * allows many attempts and a minute per attempt.
 *
 * @example
 * ```ts
 * await client.enqueueMany(AiSummary, documentIds.map((documentId) => ({ payload: { documentId } })));
 * ```
 */
export const AiSummary = defineJob<AiSummary>("ai-summary", { maxAttempts: 10, timeoutMs: 60_000 });

/**
 * Validates a stored `ai-summary` payload and fills in `maxWords`.
 *
 * @example
 * ```ts
 * parseAiSummary({ documentId: 7 });    // { documentId: 7, maxWords: 60 }
 * parseAiSummary({ documentId: null }); // throws: documentId must be a positive integer, got null
 * ```
 */
export function parseAiSummary(payload: unknown): AiSummary {
  const fields = PayloadFields.of(payload, ["documentId", "maxWords"]);
  return {
    documentId: fields.positiveInteger("documentId"),
    maxWords: fields.optionalInteger("maxWords", 5, 500, DEFAULT_SUMMARY_WORDS),
  };
}
