import type { JobStore } from "../../src/store/job-store";
import type { ScheduleStore } from "../../src/store/schedule-store";

/** One call that reached the recording store: the method and its arguments, as given. */
export interface RecordedCall {
  readonly method: string;
  readonly args: readonly unknown[];
}

/**
 * A store with every method: each records its call and resolves with what
 * `answers` holds for the method (`undefined` otherwise). For tests of
 * what reaches a store and what is refused before it.
 *
 * @example
 * ```ts
 * const { store, calls } = recordingStore({ claimBatch: [] });
 * await store.claimBatch({ queue: "q", workerId: "w", limit: 1, leaseMs: 1_000 });
 * calls; // [{ method: "claimBatch", args: [{ queue: "q", … }] }]
 * ```
 */
export function recordingStore(answers: Readonly<Record<string, unknown>> = {}): {
  readonly store: JobStore & ScheduleStore;
  readonly calls: RecordedCall[];
} {
  const calls: RecordedCall[] = [];
  const store = new Proxy(
    {},
    {
      get: (_target, method) =>
        typeof method !== "string" || method === "then" || method === "completions"
          ? undefined
          : (...args: unknown[]) => {
              calls.push({ method, args });
              return Promise.resolve(answers[method]);
            },
    },
  );
  return { store: store as JobStore & ScheduleStore, calls };
}

/** What `call` rejected with; fails the test when it resolves (the store took a call it should have refused). */
export async function refusal(call: Promise<unknown>): Promise<Error> {
  return call.then(
    () => {
      throw new Error("expected the call to be refused; it reached the store");
    },
    (thrown: unknown) => thrown as Error,
  );
}
