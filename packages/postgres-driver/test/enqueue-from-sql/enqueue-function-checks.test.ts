import {
  ConfigError,
  DEFAULT_MAX_PAYLOAD_BYTES,
  defineJob,
  InvalidNameError,
  MAX_ATTEMPTS,
  MAX_DEDUPE_KEY_LENGTH,
  MAX_META_BYTES,
  MAX_PAYLOAD_DEPTH,
  MAX_PRIORITY,
  MAX_QUEUE_NAME_LENGTH,
  MAX_TIMEOUT_MS,
  MIN_PRIORITY,
  PayloadError,
  type EnqueueOptions,
} from "@stint/core";
import { buildNewJob } from "@stint/core/driver";
import { expect } from "chai";
import { sql } from "kysely";
import pg from "pg";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { JsonText, sqlEnqueue, type SqlEnqueueOptions } from "./sql-enqueue";
import { WINDOW_CASES } from "./window-cases";

/** The job kind the library's side enqueues as: no options, so the library's defaults. */
const Parity = defineJob<unknown>("parity");

const DAY_MS = 86_400_000;
/** The library's longest delay (`MAX_DELAY_MS`, not exported): ten years of 365 days. */
const TEN_YEARS_MS = 3_650 * DAY_MS;

/** `depth` arrays, one inside the other: `[[…[]…]]`. */
function nestedArrays(depth: number): unknown {
  let value: unknown = [];
  for (let level = 1; level < depth; level += 1) value = [value];
  return value;
}

/** `depth` objects, one inside the other: `{"a":{"a":…{}}}`. */
function nestedObjects(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let level = 1; level < depth; level += 1) value = { a: value };
  return value;
}

/** An object whose JSON text (`JSON.stringify`) is exactly `bytes` bytes. */
function objectOfBytes(bytes: number): Record<string, string> {
  const value = { s: "x".repeat(bytes - '{"s":""}'.length) };
  expect(Buffer.byteLength(JSON.stringify(value))).to.equal(bytes);
  return value;
}

/** One check, as the library's enqueue options and the SQL function's parameters spell it. */
interface Case {
  readonly what: string;
  readonly queue?: string;
  readonly payload?: unknown;
  readonly library?: EnqueueOptions;
  readonly sql?: SqlEnqueueOptions;
  /** The parameter the SQL function names when it refuses; absent when both accept. */
  readonly refused?: { readonly column: string; readonly message: RegExp };
}

const CASES: readonly Case[] = [
  {
    what: "a queue name of upper-case letters and a space",
    queue: "Send Invoice",
    refused: { column: "queue", message: /^queue must be 1-128 characters .*got "Send Invoice"$/ },
  },
  { what: "a queue name starting with a dash", queue: "-mail", refused: { column: "queue", message: /^queue must be/ } },
  { what: "the longest queue name", queue: "q".repeat(MAX_QUEUE_NAME_LENGTH) },
  { what: "a queue name one character too long", queue: "q".repeat(MAX_QUEUE_NAME_LENGTH + 1), refused: { column: "queue", message: /^queue must be/ } },
  { what: "a queue name of every allowed kind of character", queue: "a0_.:-z9" },
  { what: "the highest priority", library: { priority: MAX_PRIORITY }, sql: { priority: MAX_PRIORITY } },
  { what: "the lowest priority", library: { priority: MIN_PRIORITY }, sql: { priority: MIN_PRIORITY } },
  {
    what: "a priority above the range",
    library: { priority: MAX_PRIORITY + 1 },
    sql: { priority: MAX_PRIORITY + 1 },
    refused: { column: "priority", message: /^priority must be an integer from -32768 to 32767, got 32768$/ },
  },
  {
    what: "a priority below the range",
    library: { priority: MIN_PRIORITY - 1 },
    sql: { priority: MIN_PRIORITY - 1 },
    refused: { column: "priority", message: /^priority must be/ },
  },
  {
    what: "no attempts",
    library: { maxAttempts: 0 },
    sql: { max_attempts: 0 },
    refused: { column: "max_attempts", message: /^max_attempts must be an integer from 1 to 1000, got 0$/ },
  },
  { what: "the most attempts", library: { maxAttempts: MAX_ATTEMPTS }, sql: { max_attempts: MAX_ATTEMPTS } },
  {
    what: "one attempt too many",
    library: { maxAttempts: MAX_ATTEMPTS + 1 },
    sql: { max_attempts: MAX_ATTEMPTS + 1 },
    refused: { column: "max_attempts", message: /^max_attempts must be/ },
  },
  {
    what: "a time limit of nothing",
    library: { timeoutMs: 0 },
    sql: { timeout: "0" },
    refused: { column: "timeout", message: /^timeout must be whole milliseconds/ },
  },
  { what: "the longest time limit", library: { timeoutMs: MAX_TIMEOUT_MS }, sql: { timeout: `${MAX_TIMEOUT_MS} milliseconds` } },
  {
    what: "a time limit a millisecond too long",
    library: { timeoutMs: MAX_TIMEOUT_MS + 1 },
    sql: { timeout: `${MAX_TIMEOUT_MS + 1} milliseconds` },
    refused: { column: "timeout", message: /^timeout must be/ },
  },
  {
    what: "a time limit in part of a millisecond",
    library: { timeoutMs: 1.5 },
    sql: { timeout: "1.5 milliseconds" },
    refused: { column: "timeout", message: /^timeout must be whole milliseconds/ },
  },
  {
    what: "a run time that is not a time",
    library: { runAt: new Date(Number.NaN) },
    sql: { run_at: "infinity" },
    refused: { column: "run_at", message: /^run_at must be a finite time/ },
  },
  {
    what: "a negative delay",
    library: { delayMs: -1 },
    sql: { delay: "-1 milliseconds" },
    refused: { column: "delay", message: /^delay must be from 0 to 3650 days/ },
  },
  { what: "the longest delay", library: { delayMs: TEN_YEARS_MS }, sql: { delay: "3650 days" } },
  {
    what: "a delay a millisecond too long",
    library: { delayMs: TEN_YEARS_MS + 1 },
    sql: { delay: "3650 days 1 millisecond" },
    refused: { column: "delay", message: /^delay must be/ },
  },
  {
    what: "an empty dedupe key",
    library: { dedupeKey: "" },
    sql: { dedupe_key: "" },
    refused: { column: "dedupe_key", message: /^dedupe_key must be a non-empty text/ },
  },
  { what: "the longest dedupe key", library: { dedupeKey: "k".repeat(MAX_DEDUPE_KEY_LENGTH) }, sql: { dedupe_key: "k".repeat(MAX_DEDUPE_KEY_LENGTH) } },
  {
    what: "a dedupe key one character too long",
    library: { dedupeKey: "k".repeat(MAX_DEDUPE_KEY_LENGTH + 1) },
    sql: { dedupe_key: "k".repeat(MAX_DEDUPE_KEY_LENGTH + 1) },
    refused: { column: "dedupe_key", message: /^dedupe_key must be a non-empty text of at most 512 characters/ },
  },
  {
    what: "a dedupe key of 256 characters beyond U+FFFF (512 UTF-16 units)",
    library: { dedupeKey: "😀".repeat(MAX_DEDUPE_KEY_LENGTH / 2) },
    sql: { dedupe_key: "😀".repeat(MAX_DEDUPE_KEY_LENGTH / 2) },
  },
  {
    what: "a dedupe key of 257 characters, 256 of them beyond U+FFFF (513 UTF-16 units)",
    library: { dedupeKey: `${"😀".repeat(MAX_DEDUPE_KEY_LENGTH / 2)}k` },
    sql: { dedupe_key: `${"😀".repeat(MAX_DEDUPE_KEY_LENGTH / 2)}k` },
    refused: { column: "dedupe_key", message: /^dedupe_key must be/ },
  },
  {
    what: "an unknown dedupe mode",
    library: { dedupeKey: "k", dedupe: "merge" as never },
    sql: { dedupe_key: "k", dedupe: "merge" },
    refused: { column: "dedupe", message: /^dedupe must be one of keep, replace, debounce, got "merge"$/ },
  },
  {
    what: "replace without a dedupe key",
    library: { dedupe: "replace" },
    sql: { dedupe: "replace" },
    refused: { column: "dedupe", message: /^dedupe "replace" needs a dedupe_key$/ },
  },
  {
    what: "debounce without a delay",
    library: { dedupeKey: "k", dedupe: "debounce" },
    sql: { dedupe_key: "k", dedupe: "debounce" },
    refused: { column: "dedupe", message: /^dedupe "debounce" needs a delay \(or a run_at\)/ },
  },
  {
    what: "debounce with a run time",
    library: { dedupeKey: "k", dedupe: "debounce", runAt: new Date(Date.now() + 60_000) },
    sql: { dedupe_key: "k", dedupe: "debounce", run_at: new Date(Date.now() + 60_000) },
  },
  { what: "a JSON null payload", payload: null, sql: {} },
  { what: `a payload nested ${MAX_PAYLOAD_DEPTH} arrays deep`, payload: nestedArrays(MAX_PAYLOAD_DEPTH) },
  {
    what: `a payload nested ${MAX_PAYLOAD_DEPTH + 1} arrays deep`,
    payload: nestedArrays(MAX_PAYLOAD_DEPTH + 1),
    refused: { column: "payload", message: /^payload of queue "parity" is nested more than 64 levels deep/ },
  },
  {
    what: `a payload nested ${MAX_PAYLOAD_DEPTH + 1} objects deep`,
    payload: nestedObjects(MAX_PAYLOAD_DEPTH + 1),
    refused: { column: "payload", message: /^payload of queue "parity" is nested more than 64 levels deep/ },
  },
  { what: "a payload of exactly the size limit", payload: objectOfBytes(DEFAULT_MAX_PAYLOAD_BYTES) },
  {
    what: "a payload a byte over the size limit",
    payload: objectOfBytes(DEFAULT_MAX_PAYLOAD_BYTES + 1),
    refused: { column: "payload", message: /^payload of queue "parity" is 1048577 bytes of JSON, more than the limit of 1048576 bytes$/ },
  },
  {
    what: "meta that is an array",
    library: { meta: ["a"] as never },
    sql: { meta: ["a"] },
    refused: { column: "meta", message: /^meta must be a JSON object, got an array$/ },
  },
  { what: "meta of exactly its size limit", library: { meta: objectOfBytes(MAX_META_BYTES) }, sql: { meta: objectOfBytes(MAX_META_BYTES) } },
  {
    what: "meta a byte over its size limit",
    library: { meta: objectOfBytes(MAX_META_BYTES + 1) },
    sql: { meta: objectOfBytes(MAX_META_BYTES + 1) },
    refused: { column: "meta", message: /^meta is 8193 bytes of JSON, more than the limit of 8192 bytes$/ },
  },
  {
    what: `meta nested ${MAX_PAYLOAD_DEPTH + 1} objects deep`,
    library: { meta: nestedObjects(MAX_PAYLOAD_DEPTH + 1) as never },
    sql: { meta: nestedObjects(MAX_PAYLOAD_DEPTH + 1) },
    refused: { column: "meta", message: /^meta is nested more than 64 levels deep/ },
  },
];

describe("the enqueue SQL function refuses what the library refuses", () => {
  let test: TestSchema;
  let client: pg.Client;

  before(async () => {
    test = await createTestSchema({ maxConnections: 4 });
    client = new pg.Client({ connectionString: test.connectionString });
    await client.connect();
  });
  after(async () => {
    await client.end();
    await test.drop();
  });

  /** Whether the library's enqueue accepts the case (in a transaction it rolls back, so it leaves no job). */
  async function libraryRefusal(c: Case): Promise<Error | undefined> {
    const rolledBack = new Error("rolled back");
    try {
      await test.db.transaction().execute(async (trx) => {
        await test.store.enqueue({ ...buildNewJob(Parity, "payload" in c ? c.payload : { n: 1 }, c.library ?? {}), queue: c.queue ?? Parity.name }, trx);
        throw rolledBack;
      });
    } catch (thrown) {
      if (thrown === rolledBack) return undefined;
      if (thrown instanceof ConfigError || thrown instanceof PayloadError || thrown instanceof InvalidNameError) return thrown;
      throw thrown;
    }
    throw new Error("the transaction was not rolled back");
  }

  async function jobCount(): Promise<number> {
    const { rows } = await sql<{ jobs: number }>`SELECT count(*)::integer AS jobs FROM ${sql.id(test.schema, "jobs")}`.execute(test.db);
    return rows[0]!.jobs;
  }

  for (const c of [...CASES, ...WINDOW_CASES] as readonly Case[]) {
    it(`${c.refused === undefined ? "accepts" : "refuses"} ${c.what}, as the library does`, async () => {
      const library = await libraryRefusal(c);
      expect(library, `the library ${library === undefined ? "accepted" : `refused: ${library.message}`}`).to.satisfy((refusal: Error | undefined) =>
        c.refused === undefined ? refusal === undefined : refusal !== undefined,
      );

      const before = await jobCount();
      const payload = "payload" in c ? (c.payload === null ? new JsonText("null") : c.payload) : { n: 1 };
      const outcome = await sqlEnqueue(client, test.schema, c.queue ?? Parity.name, payload, c.sql ?? {});
      if (c.refused === undefined) {
        expect(outcome.refused, "the SQL function").to.equal(undefined);
        expect(outcome.id).to.match(/^\d+$/);
        expect(await jobCount(), "one job more").to.equal(before + 1);
        return;
      }
      expect(outcome.refused).to.include({ code: "22023", column: c.refused.column });
      expect(outcome.refused!.message).to.match(c.refused.message);
      expect(await jobCount(), "no job written").to.equal(before);
    });
  }

  it("refuses a SQL NULL queue or payload and a size limit out of range, and cuts a long name in its message", async () => {
    const calls: readonly [string | null, unknown, SqlEnqueueOptions, string, RegExp][] = [
      [null, { n: 1 }, {}, "queue", /^queue must be .*got NULL$/],
      ["Q".repeat(300), { n: 1 }, {}, "queue", new RegExp(`got "${"Q".repeat(200)}"… \\(300 characters\\)$`)],
      ["parity", null, {}, "payload", /^payload must be a JSON value, got NULL/],
      ["parity", { n: 1 }, { max_payload_bytes: 1 }, "max_payload_bytes", /^max_payload_bytes must be an integer from 2 to 268435455, got 1$/],
    ];
    for (const [queue, payload, options, column, message] of calls) {
      const { refused } = await sqlEnqueue(client, test.schema, queue, payload, options);
      expect(refused, column).to.include({ code: "22023", column });
      expect(refused!.message).to.match(message);
    }
  });

  it("holds a payload to a size limit given by the caller, as a job kind's maxPayloadBytes does", async () => {
    const small = defineJob<unknown>("parity", { maxPayloadBytes: 64 });
    expect(() => buildNewJob(small, objectOfBytes(65))).to.throw(PayloadError, /more than the limit of 64 bytes/);
    expect((await sqlEnqueue(client, test.schema, "parity", objectOfBytes(64), { max_payload_bytes: 64 })).id).to.match(/^\d+$/);
    const { refused } = await sqlEnqueue(client, test.schema, "parity", objectOfBytes(65), { max_payload_bytes: 64 });
    expect(refused?.message).to.equal('payload of queue "parity" is 65 bytes of JSON, more than the limit of 64 bytes');
  });
});
