import type { Migration } from "./migration";
import { enqueueFunctionStatement } from "./enqueue-function-statement";
import { ENQUEUE_SIGNATURE, enqueueWindowsFunctionStatements, WINDOWS_SIGNATURE } from "./enqueue-function-windows";

/**
 * Version 24: `enqueue(…)` takes a group (`group_key`) or a serial key
 * (`serial_key`, and `serial_on_dead`: `hold` or `release`), as `group`,
 * `serialKey` and `serialOnDead` do in the library (see version 23). Three
 * more parameters make a new function, which keeps the old one's grants
 * (see `enqueueWindowsFunctionStatements`).
 */
export const enqueueFunctionGroupsMigration: Migration = Object.freeze({
  version: 24,
  name: "enqueue-function-groups",
  statements: (schema: string) =>
    enqueueWindowsFunctionStatements(schema, enqueueFunctionStatement(schema, { events: true, windows: true, groups: true }), {
      from: WINDOWS_SIGNATURE,
      to: ENQUEUE_SIGNATURE,
    }),
});
