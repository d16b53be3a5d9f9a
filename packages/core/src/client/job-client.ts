import { inject, injectable } from "tsyringe";
import { buildNewJob, type EnqueueOptions } from "../job/enqueue-options";
import type { JobDefinition } from "../job/job-definition";
import type { JsonObject } from "../job/json-types";
import { traceEnqueue } from "../tracing/job-tracing";
import type { EnqueueResult, JobStore } from "../store/job-store";
import { JOB_STORE } from "../di/tokens";
import { ClientEvents } from "../events/client-events";

/** One job of a `enqueueMany` batch. */
export interface BatchItem<T> {
  readonly payload: T;
  readonly options?: Omit<EnqueueOptions, "transaction">;
}

/**
 * The producer side: puts typed jobs into the store. The payload type comes
 * from the job kind, so the compiler checks every call.
 *
 * @example
 * ```ts
 * const client = container.resolve(JobClient);
 * await client.enqueue(SendInvoice, { invoiceId: 812 });
 * await db.transaction().execute(async (trx) => {
 *   await trx.insertInto("invoices").values(invoice).execute();
 *   await client.enqueue(SendInvoice, { invoiceId: invoice.id }, { transaction: trx });
 * });
 * ```
 */
@injectable()
export class JobClient {
  readonly #store: JobStore;

  /**
   * `job.enqueued` after each job this client inserts. Subscribe on the
   * instance you enqueue with (a container resolves a new `JobClient` each
   * time unless you register it as a singleton).
   *
   * @example
   * ```ts
   * client.events.on("job.enqueued", (event) => metrics.increment(event.queue));
   * ```
   */
  readonly events = new ClientEvents();

  constructor(@inject(JOB_STORE) store: JobStore) {
    this.#store = store;
  }

  /**
   * Inserts one job (or finds the active job holding its dedupe key). The
   * payload must read back exactly as given: a value JSON would change
   * (`Map`, `Set`, `Date`, typed arrays, class instances, `undefined` in an
   * array, `NaN` …), text `jsonb` cannot store, nesting deeper than 64
   * levels or more than the kind's `maxPayloadBytes` is refused with a
   * `PayloadError` naming its path, and nothing is inserted (see
   * `serializePayload`).
   *
   * @example
   * ```ts
   * await client.enqueue(SendInvoice, { invoiceId: 812 });
   * await client.enqueue(Report, { tags: new Set(["a"]) }); // PayloadError: payload.tags: a Set cannot be stored as JSON; convert it to an array
   * ```
   */
  async enqueue<T>(definition: JobDefinition<T>, payload: T, options: EnqueueOptions = {}): Promise<EnqueueResult> {
    // In a producer span whose trace context goes into the job's meta: the attempts run under it.
    const result = await traceEnqueue(definition.name, 1, (withContext) =>
      this.#store.enqueue(buildNewJob(definition, payload, withMeta(options, withContext(options.meta))), options.transaction),
    );
    if (this.events.listenerCount("job.enqueued") > 0) this.#enqueued(definition.name, result, options.transaction !== undefined);
    return result;
  }

  /**
   * Inserts many jobs of one kind in one statement; results are in input order.
   * Every payload is checked (as for {@link enqueue}) before anything is
   * written: one refused payload refuses the whole batch.
   */
  async enqueueMany<T>(
    definition: JobDefinition<T>,
    items: readonly BatchItem<T>[],
    options: { readonly transaction?: unknown } = {},
  ): Promise<readonly EnqueueResult[]> {
    const results = await traceEnqueue(definition.name, items.length, (withContext) => {
      const jobs = items.map((item) => buildNewJob(definition, item.payload, withMeta(item.options ?? {}, withContext(item.options?.meta))));
      return this.#store.enqueueMany(jobs, options.transaction);
    });
    if (this.events.listenerCount("job.enqueued") > 0) {
      for (const result of results) this.#enqueued(definition.name, result, options.transaction !== undefined);
    }
    return results;
  }

  #enqueued(queue: string, result: EnqueueResult, inTransaction: boolean): void {
    this.events.emit("job.enqueued", { jobId: result.id, queue, attempt: 0, duplicate: result.duplicate, inTransaction, at: new Date() });
  }
}

/** `options` with `meta` in place of its own (the same object when nothing changed). */
function withMeta(options: EnqueueOptions, meta: JsonObject | undefined): EnqueueOptions {
  return meta === options.meta ? options : { ...options, meta };
}
