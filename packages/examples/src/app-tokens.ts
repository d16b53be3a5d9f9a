import type { BackoffOptions } from "@stint/core";
import type { InjectionToken } from "tsyringe";
import type { AppDb } from "./app/app-tables";
import type { LlmClient } from "./services/llm-client";
import type { Mailer } from "./services/mailer";

/**
 * Token of the app's Kysely instance, scoped to the app schema (see `appDatabase`).
 *
 * @example
 * ```ts
 * constructor(@inject(APP_DB) db: AppDb) {}
 * ```
 */
export const APP_DB: InjectionToken<AppDb> = Symbol.for("stint.examples.AppDb");

/**
 * Token of the app's schema name (the same as stint's), for workers that
 * scope a transaction handed out by stint (`ctx.once`, `ctx.transaction`)
 * to the app's tables with `appDatabase(trx, schema)`.
 *
 * @example
 * ```ts
 * constructor(@inject(APP_SCHEMA) schema: string) {}
 * ```
 */
export const APP_SCHEMA: InjectionToken<string> = Symbol.for("stint.examples.AppSchema");

/**
 * Token of the {@link Mailer} the e-mail workers send with.
 *
 * @example
 * ```ts
 * container.registerInstance(MAILER, new RecordingMailer(db));
 * ```
 */
export const MAILER: InjectionToken<Mailer> = Symbol.for("stint.examples.Mailer");

/**
 * Token of the {@link LlmClient} the AI summary worker calls.
 *
 * @example
 * ```ts
 * container.registerInstance(LLM_CLIENT, new FakeLlmClient({ rateLimitRate: 0.1 }));
 * ```
 */
export const LLM_CLIENT: InjectionToken<LlmClient> = Symbol.for("stint.examples.LlmClient");

/**
 * Token of the retry backoff every example worker uses. Production wiring
 * keeps stint's defaults (`{}`); the demo and tests register short delays.
 *
 * @example
 * ```ts
 * container.registerInstance(RETRY_BACKOFF, { baseMs: 100, maxMs: 1_000 });
 * ```
 */
export const RETRY_BACKOFF: InjectionToken<Partial<BackoffOptions>> = Symbol.for("stint.examples.RetryBackoff");
