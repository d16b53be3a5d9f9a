/** A request to a language model. */
export interface CompletionRequest {
  readonly prompt: string;
  /** Upper bound of the answer's length, in tokens (about words). */
  readonly maxTokens: number;
}

/** A language model's answer. */
export interface Completion {
  readonly text: string;
  readonly model: string;
}

/**
 * A language model API. The AI summary worker depends on this interface
 * only (injected with the `LLM_CLIENT` token); the examples ship a
 * `FakeLlmClient` with latency and rate limits.
 *
 * @example
 * ```ts
 * const answer = await llm.complete({ prompt: "Summarise: …", maxTokens: 60 }, { signal: ctx.signal });
 * ```
 */
export interface LlmClient {
  /** Rejects with {@link LlmRateLimitError} when rate limited, and honours `signal`. */
  complete(request: CompletionRequest, options?: { readonly signal?: AbortSignal }): Promise<Completion>;
}

/**
 * The model API answered 429. `retryAfterMs` is its `Retry-After`.
 *
 * @example
 * ```ts
 * if (isRateLimited(error)) throw retryAfter(error.retryAfterMs, error);
 * ```
 */
export class LlmRateLimitError extends Error {
  readonly status = 429;
  readonly retryAfterMs: number;

  constructor(retryAfterMs: number) {
    super(`rate limited by the model API (429), retry after ${retryAfterMs} ms`);
    this.name = "LlmRateLimitError";
    this.retryAfterMs = retryAfterMs;
  }
}

/**
 * True for a rate-limit error from any copy of this module: checked by its
 * `status` and `retryAfterMs`, not by `instanceof`.
 *
 * @example
 * ```ts
 * isRateLimited(new LlmRateLimitError(500)); // true
 * ```
 */
export function isRateLimited(error: unknown): error is LlmRateLimitError {
  return (
    typeof error === "object" &&
    error !== null &&
    (error as { status?: unknown }).status === 429 &&
    typeof (error as { retryAfterMs?: unknown }).retryAfterMs === "number"
  );
}
