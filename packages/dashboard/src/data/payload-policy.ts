import { ConfigError, redact, redactText } from "@stint/core";
import { secretValuesOf } from "@stint/core/internal";

/** A job kind as the dashboard needs it: its queue name and its secret fields. */
export interface KnownJobKind {
  readonly name: string;
  readonly secretFields?: readonly string[];
}

/**
 * Which payloads the dashboard shows: only those of job kinds it knows
 * (`"known-kinds"`, the default: their `secretFields` are redacted, the
 * payloads of other queues are hidden), or every payload (`"all"`: those
 * of unknown kinds unredacted, with a note saying so).
 */
export type PayloadVisibility = "known-kinds" | "all";

/** How one job's payload is to be shown. */
export type ShownPayload =
  | { readonly shown: true; readonly value: unknown; readonly redactedFields: readonly string[]; readonly kindKnown: boolean }
  | { readonly shown: false; readonly reason: string };

/**
 * Redacts a job's payload and texts as the worker's logs do: the kind's
 * `secretFields` become `[redacted]` in the payload, and every value found
 * at them is replaced in error texts, results, meta and progress.
 *
 * @example
 * ```ts
 * const policy = new PayloadPolicy([ChargeCard], "known-kinds");
 * policy.payload("charge-card", { card: { number: "4242" } }); // { shown: true, value: { card: { number: "[redacted]" } }, … }
 * policy.payload("other", { x: 1 });                            // { shown: false, reason: "…" }
 * ```
 */
export class PayloadPolicy {
  readonly #secretFields: ReadonlyMap<string, readonly string[]>;
  readonly #visibility: PayloadVisibility;

  constructor(kinds: readonly KnownJobKind[], visibility: PayloadVisibility) {
    if (!Array.isArray(kinds)) throw new ConfigError("jobKinds", "must be an array of job kinds (defineJob results)");
    if (visibility !== "known-kinds" && visibility !== "all") throw new ConfigError("payloads", 'must be "known-kinds" or "all"');
    const fields = new Map<string, readonly string[]>();
    for (const kind of kinds as readonly KnownJobKind[]) {
      if (typeof kind?.name !== "string") throw new ConfigError("jobKinds", "each job kind must have a name (use defineJob)");
      fields.set(kind.name, [...(fields.get(kind.name) ?? []), ...(kind.secretFields ?? [])]);
    }
    this.#secretFields = fields;
    this.#visibility = visibility;
  }

  /** True when the dashboard knows the job kind of `queue`. */
  knows(queue: string): boolean {
    return this.#secretFields.has(queue);
  }

  /** The payload of a job of `queue`, redacted, or why it is hidden. */
  payload(queue: string, payload: unknown): ShownPayload {
    const fields = this.#secretFields.get(queue);
    if (fields !== undefined) return { shown: true, value: redact(payload, fields), redactedFields: fields, kindKnown: true };
    if (this.#visibility === "all") return { shown: true, value: payload, redactedFields: [], kindKnown: false };
    return {
      shown: false,
      reason: `The payload is hidden: the dashboard does not know the job kind of queue "${queue}", so it cannot redact its secret fields.`,
    };
  }

  /** A function that replaces the job's secret values in a text (errors, stacks, results). */
  scrubberFor(queue: string, payload: unknown): (text: string) => string {
    const fields = this.#secretFields.get(queue);
    if (fields === undefined || fields.length === 0) return (text) => text;
    const secrets = secretValuesOf(payload, fields);
    return (text) => redactText(text, secrets);
  }
}
