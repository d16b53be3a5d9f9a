import { setTimeout as delay } from "node:timers/promises";
import { LlmRateLimitError, type Completion, type CompletionRequest, type LlmClient } from "./llm-client";
import { seededRandom } from "@stint/core/internal";

/** Options of {@link FakeLlmClient}. */
export interface FakeLlmClientOptions {
  /** Simulated response time, uniformly between `min` and `max` ms. Default 20–80. */
  readonly latencyMs?: { readonly min: number; readonly max: number };
  /** Share of calls answered with a 429, from 0 to 1. Default 0. */
  readonly rateLimitRate?: number;
  /** The `Retry-After` of a 429, in ms. Default 200. */
  readonly retryAfterMs?: number;
  /** Random numbers in [0, 1). Default a generator seeded with 42. */
  readonly random?: () => number;
}

/**
 * A stand-in for a language model API: it answers after a random latency
 * with the first words of the prompt's last paragraph, rate limits a share
 * of the calls, and stops when its signal aborts. It counts what it saw,
 * including the most calls it had in flight at once.
 *
 * @example
 * ```ts
 * const llm = new FakeLlmClient({ latencyMs: { min: 20, max: 60 }, rateLimitRate: 0.1 });
 * const { text } = await llm.complete({ prompt: "Summarise:\n\nStint runs jobs.", maxTokens: 10 });
 * llm.maxInFlight; // 1
 * ```
 */
export class FakeLlmClient implements LlmClient {
  /** The model name reported in every completion. */
  static readonly MODEL = "fake-summarizer-1";

  readonly #latency: { readonly min: number; readonly max: number };
  readonly #rateLimitRate: number;
  readonly #retryAfterMs: number;
  readonly #random: () => number;
  #calls = 0;
  #rateLimited = 0;
  #inFlight = 0;
  #maxInFlight = 0;

  constructor(options: FakeLlmClientOptions = {}) {
    this.#latency = options.latencyMs ?? { min: 20, max: 80 };
    this.#rateLimitRate = options.rateLimitRate ?? 0;
    this.#retryAfterMs = options.retryAfterMs ?? 200;
    this.#random = options.random ?? seededRandom(42);
  }

  /** Calls made so far. */
  get calls(): number {
    return this.#calls;
  }

  /** Calls answered with a 429. */
  get rateLimited(): number {
    return this.#rateLimited;
  }

  /** The most calls that were in flight at the same time. */
  get maxInFlight(): number {
    return this.#maxInFlight;
  }

  async complete(request: CompletionRequest, options: { readonly signal?: AbortSignal } = {}): Promise<Completion> {
    this.#calls += 1;
    this.#inFlight += 1;
    this.#maxInFlight = Math.max(this.#maxInFlight, this.#inFlight);
    try {
      const { min, max } = this.#latency;
      await delay(Math.round(min + (max - min) * this.#random()), undefined, { signal: options.signal });
      if (this.#random() < this.#rateLimitRate) {
        this.#rateLimited += 1;
        throw new LlmRateLimitError(this.#retryAfterMs);
      }
      const paragraphs = request.prompt.trim().split(/\n\s*\n/);
      const words = (paragraphs[paragraphs.length - 1] ?? "").split(/\s+/).filter(Boolean);
      const text = words.slice(0, request.maxTokens).join(" ") + (words.length > request.maxTokens ? " …" : "");
      return { text, model: FakeLlmClient.MODEL };
    } finally {
      this.#inFlight -= 1;
    }
  }
}
