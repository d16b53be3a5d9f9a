import { defineJob, type ItemOf } from "@stint/core";
import { z } from "zod";

/**
 * Summary length when a payload names none.
 *
 * @example
 * ```ts
 * await client.enqueue(AiSummary, { documentId: 7 }); // its worker gets { documentId: 7, maxWords: DEFAULT_SUMMARY_WORDS }
 * ```
 */
export const DEFAULT_SUMMARY_WORDS = 60;

/**
 * The `ai-summary` job kind: summarise one stored document with a language
 * model, in at most `maxWords` words (5 to 500, default 60). Model calls
 * are slow and rate limited, so it allows many attempts and a minute per
 * attempt.
 *
 * @example
 * ```ts
 * await client.enqueueMany(AiSummary, documentIds.map((documentId) => ({ payload: { documentId } })));
 * await client.enqueue(AiSummary, { documentId: 7, maxWords: 1 });
 * // PayloadSchemaError: … failed its schema: payload.maxWords: Too small: expected number to be >=5
 * ```
 */
export const AiSummary = defineJob("ai-summary", {
  schema: z.strictObject({
    documentId: z.int32().positive(),
    maxWords: z.int().min(5).max(500).default(DEFAULT_SUMMARY_WORDS),
  }),
  maxAttempts: 10,
  timeoutMs: 60_000,
});

/** Payload of an `ai-summary` job as its worker gets it: `maxWords` filled in. */
export type AiSummary = ItemOf<typeof AiSummary>;
