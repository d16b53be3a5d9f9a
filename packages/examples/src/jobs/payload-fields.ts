import { ValidationError } from "./validation-error";

/**
 * Reads the fields of a job payload, one checked field at a time. Each
 * reader throws a {@link ValidationError} naming the field; unknown fields
 * are refused, so a typo in a producer is caught instead of ignored.
 *
 * @example
 * ```ts
 * const fields = PayloadFields.of(payload, ["invoiceId"]);
 * const invoiceId = fields.positiveInteger("invoiceId");
 * // { invoiceId: "abc" } throws: invoiceId must be a positive integer, got "abc"
 * ```
 */
export class PayloadFields {
  readonly #record: Readonly<Record<string, unknown>>;

  private constructor(record: Readonly<Record<string, unknown>>) {
    this.#record = record;
  }

  /** Checks that `payload` is a plain object whose keys are all in `known`. */
  static of(payload: unknown, known: readonly string[]): PayloadFields {
    if (typeof payload !== "object" || payload === null || Array.isArray(payload)) {
      throw new ValidationError("payload", "must be an object", payload);
    }
    const record = payload as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      if (!known.includes(key)) throw new ValidationError(key, `is not a known field (known: ${known.join(", ")})`, record[key]);
    }
    return new PayloadFields(record);
  }

  /** An integer from 1 to 2,147,483,647 (a PostgreSQL `integer` key). */
  positiveInteger(field: string): number {
    return this.integer(field, 1, 2_147_483_647, "must be a positive integer");
  }

  /** An integer in `[min, max]`. */
  integer(field: string, min: number, max: number, requirement = `must be an integer from ${min} to ${max}`): number {
    const value = this.#record[field];
    if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
      throw new ValidationError(field, requirement, value);
    }
    return value;
  }

  /** Like {@link integer}, but `fallback` when the field is absent. */
  optionalInteger(field: string, min: number, max: number, fallback: number): number {
    return this.#record[field] === undefined ? fallback : this.integer(field, min, max);
  }

  /** One of the given strings. */
  oneOf<const V extends string>(field: string, values: readonly V[]): V {
    const value = this.#record[field];
    if (typeof value !== "string" || !(values as readonly string[]).includes(value)) {
      throw new ValidationError(field, `must be one of ${values.map((v) => JSON.stringify(v)).join(", ")}`, value);
    }
    return value as V;
  }

  /** A calendar date written `YYYY-MM-DD` that exists (no 2025-02-30). */
  isoDate(field: string): string {
    const value = this.#record[field];
    if (typeof value !== "string" || !/^\d{4}-\d{2}-\d{2}$/.test(value)) {
      throw new ValidationError(field, "must be a date written YYYY-MM-DD", value);
    }
    const parsed = new Date(`${value}T00:00:00Z`);
    if (!Number.isFinite(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== value) {
      throw new ValidationError(field, "must be a date that exists", value);
    }
    return value;
  }

  /** An e-mail address (one `@`, no spaces, at most 254 characters). */
  email(field: string): string {
    const value = this.#record[field];
    if (typeof value !== "string" || value.length > 254 || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value)) {
      throw new ValidationError(field, "must be an e-mail address", value);
    }
    return value;
  }
}
