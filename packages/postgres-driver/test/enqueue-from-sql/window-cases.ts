import { MAX_DEDUPE_KEY_LENGTH, type EnqueueOptions } from "@stint/core";
import type { SqlEnqueueOptions } from "./sql-enqueue";

/** The library's longest unique window and expiry (`MAX_UNIQUE_FOR_MS`, `MAX_EXPIRE_IN_MS`): 3650 days. */
const LONGEST_MS = 3_650 * 86_400_000;

/** A check of version 22's parameters, in the shape of the other checks' cases. */
export interface WindowCase {
  readonly what: string;
  readonly library: EnqueueOptions;
  readonly sql: SqlEnqueueOptions;
  readonly refused?: { readonly column: string; readonly message: RegExp };
}

/**
 * The unique window's and the start-by deadline's limits, as the library
 * and the SQL function spell them (each accepted case with a key of its
 * own, so that it inserts a job).
 */
export const WINDOW_CASES: readonly WindowCase[] = [
  { what: "a unique window of one millisecond", library: { unique: { key: "w1", forMs: 1 } }, sql: { unique_key: "w1", unique_for: "1 millisecond" } },
  {
    what: "the longest unique window",
    library: { unique: { key: "w2", forMs: LONGEST_MS } },
    sql: { unique_key: "w2", unique_for: `${LONGEST_MS} milliseconds` },
  },
  {
    what: "a unique window a millisecond too long",
    library: { unique: { key: "w3", forMs: LONGEST_MS + 1 } },
    sql: { unique_key: "w3", unique_for: `${LONGEST_MS + 1} milliseconds` },
    refused: { column: "unique_for", message: /^unique_for must be whole milliseconds from 1 millisecond to 3650 days/ },
  },
  {
    what: "a unique window of nothing",
    library: { unique: { key: "w4", forMs: 0 } },
    sql: { unique_key: "w4", unique_for: "0" },
    refused: { column: "unique_for", message: /^unique_for must be/ },
  },
  {
    what: "an empty unique key",
    library: { unique: { key: "", forMs: 1_000 } },
    sql: { unique_key: "", unique_for: "1 second" },
    refused: { column: "unique_key", message: /^unique_key must be a non-empty text of at most 512 characters/ },
  },
  {
    what: "a unique key one character too long",
    library: { unique: { key: "k".repeat(MAX_DEDUPE_KEY_LENGTH + 1), forMs: 1_000 } },
    sql: { unique_key: "k".repeat(MAX_DEDUPE_KEY_LENGTH + 1), unique_for: "1 second" },
    refused: { column: "unique_key", message: /^unique_key must be/ },
  },
  {
    what: "a unique key beside a dedupe key",
    library: { unique: { key: "w5", forMs: 1_000 }, dedupeKey: "d" },
    sql: { unique_key: "w5", unique_for: "1 second", dedupe_key: "d" },
    refused: { column: "unique_key", message: /^unique_key takes no dedupe_key beside it/ },
  },
  { what: "an expiry of one millisecond", library: { expireInMs: 1 }, sql: { expire_in: "1 millisecond" } },
  {
    what: "an expiry a millisecond too long",
    library: { expireInMs: LONGEST_MS + 1 },
    sql: { expire_in: `${LONGEST_MS + 1} milliseconds` },
    refused: { column: "expire_in", message: /^expire_in must be whole milliseconds from 1 millisecond to 3650 days/ },
  },
  {
    what: "an expiry of half a millisecond",
    library: { expireInMs: 0.5 },
    sql: { expire_in: "0.5 milliseconds" },
    refused: { column: "expire_in", message: /^expire_in must be/ },
  },
  { what: "a start-by time", library: { startBy: new Date("2031-01-01T00:00:00Z") }, sql: { start_by: "2031-01-01T00:00:00Z" } },
  {
    what: "a start-by time beside an expiry",
    library: { startBy: new Date("2031-01-01T00:00:00Z"), expireInMs: 1_000 },
    sql: { start_by: "2031-01-01T00:00:00Z", expire_in: "1 second" },
    refused: { column: "start_by", message: /^start_by takes no expire_in beside it/ },
  },
];
