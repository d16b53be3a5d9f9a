import type { RawBuilder } from "kysely";

/** The statements of version 21 that replace `enqueue(…)` (filled in below). */
export function enqueueWindowsFunctionStatements(_schema: string): readonly RawBuilder<unknown>[] {
  return [];
}
