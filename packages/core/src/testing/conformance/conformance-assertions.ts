import assert from "node:assert/strict";

/**
 * Asserts that `actual` is an object whose fields named in `expected` are
 * deeply equal to theirs (other fields are not looked at).
 */
export function assertFields(actual: unknown, expected: Readonly<Record<string, unknown>>, message?: string): void {
  assert.ok(
    typeof actual === "object" && actual !== null,
    message ?? `expected an object with ${JSON.stringify(Object.keys(expected))}, got ${String(actual)}`,
  );
  const picked: Record<string, unknown> = {};
  for (const key of Object.keys(expected)) if (key in actual) picked[key] = (actual as Record<string, unknown>)[key];
  assert.deepStrictEqual(picked, expected, message);
}

/** Asserts that `actual` is a number from `min` to `max`. */
export function assertWithin(actual: unknown, min: number, max: number, message?: string): void {
  assert.ok(typeof actual === "number" && actual >= min && actual <= max, message ?? `expected a number from ${min} to ${max}, got ${String(actual)}`);
}

/** Asserts that `actual` is a number above `bound`. */
export function assertAbove(actual: unknown, bound: number, message?: string): void {
  assert.ok(typeof actual === "number" && actual > bound, message ?? `expected a number above ${bound}, got ${String(actual)}`);
}

/** Asserts that the text or list `actual` contains `part`. */
export function assertContains(actual: string | readonly unknown[] | null | undefined, part: unknown, message?: string): void {
  assert.ok(actual?.includes(part as string) === true, message ?? `expected ${JSON.stringify(actual)} to contain ${JSON.stringify(part)}`);
}

/** Asserts that the list `actual` does not contain `part`. */
export function assertLacks(actual: readonly unknown[], part: unknown, message?: string): void {
  assert.ok(!actual.includes(part), message ?? `expected ${JSON.stringify(actual)} not to contain ${JSON.stringify(part)}`);
}

/** Asserts that `actual` holds the same members as `expected`, in any order. */
export function assertSameMembers<T>(actual: readonly T[], expected: readonly T[], message?: string): void {
  const sorted = (values: readonly T[]): string[] => values.map((value) => JSON.stringify(value)).sort();
  assert.deepStrictEqual(sorted(actual), sorted(expected), message);
}
