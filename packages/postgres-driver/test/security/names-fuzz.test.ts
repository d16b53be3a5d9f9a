import { defineJob, defineSchedule, ErrorCode, errorCodeOf, MAX_DEDUPE_KEY_LENGTH } from "@stint/core";
import { assertStorableKey, buildNewJob, serializeResult, type NewJob, type ScheduleSpec } from "@stint/core/driver";
import { expect } from "chai";
import fc from "fast-check";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { container as rootContainer } from "tsyringe";
import { dropSchema, migrate, PostgresJobStore, registerPostgresDriver } from "../../src";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { catalogDifference, catalogSnapshot } from "./catalog-snapshot";
import { hostileString } from "./hostile-strings";

const STRINGS = 10_000;
const FuzzJob = defineJob<unknown>("fuzz");

/** How a call ended: its value, or the stint code it threw. */
type Outcome<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly code: string | undefined; readonly error: unknown };

function outcome<T>(run: () => T): Outcome<T> {
  try {
    return { ok: true, value: run() };
  } catch (error) {
    return { ok: false, code: errorCodeOf(error), error };
  }
}

async function settled<T>(promise: Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await promise };
  } catch (error) {
    return { ok: false, code: errorCodeOf(error), error };
  }
}

function chunks<T>(items: readonly T[], size: (item: T) => number, budget: number, maxCount = 1_000): T[][] {
  const result: T[][] = [];
  let current: T[] = [];
  let used = 0;
  for (const item of items) {
    if (current.length > 0 && (used + size(item) > budget || current.length >= maxCount)) {
      result.push(current);
      current = [];
      used = 0;
    }
    current.push(item);
    used += size(item);
  }
  if (current.length > 0) result.push(current);
  return result;
}

async function inParallel<T>(items: readonly T[], width: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await run(items[next++] as T);
    }),
  );
}

describe("10,000 hostile strings as names, keys and payload text", function () {
  this.timeout(180_000);
  const seed = Number(process.env["STINT_FUZZ_SEED"] ?? Math.floor(Math.random() * 2 ** 31));
  const strings = fc.sample(hostileString(), { numRuns: STRINGS, seed });
  const label = (s: string): string => `${JSON.stringify(s.length > 80 ? `${s.slice(0, 80)}…` : s)} (seed ${seed}; rerun with STINT_FUZZ_SEED=${seed})`;

  let t: TestSchema;
  let pool: pg.Pool;
  let db: Kysely<any>;
  let store: PostgresJobStore;
  let catalogBefore: Set<string>;
  /** Connections checked out of the pool: a call refused before any SQL checks out none. */
  let checkouts = 0;

  before(async () => {
    t = await createTestSchema({ prefix: "stint_fuzz", maxConnections: 4 });
    pool = new pg.Pool({ connectionString: t.connectionString, max: 10, application_name: t.applicationName });
    pool.on("acquire", () => {
      checkouts += 1;
    });
    db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
    store = new PostgresJobStore({ db, schema: t.schema });
    catalogBefore = await catalogSnapshot(t.db, t.schema);
  });

  after(async () => {
    await db?.destroy();
    await t?.drop();
  });

  /** Runs `call`, expects a refusal with one of `codes`, and that no connection was checked out for it. */
  async function expectRefusedBeforeSql(s: string, what: string, codes: readonly string[], call: () => Promise<unknown>): Promise<string> {
    const used = checkouts;
    const result = await settled(call());
    expect(result.ok, `${what} accepted ${label(s)}`).to.equal(false);
    const code = (result as { code: string | undefined }).code;
    expect(codes, `${what} refused ${label(s)} with ${String((result as { error: unknown }).error)}`).to.include(code);
    expect(checkouts, `${what} ran SQL for ${label(s)}`).to.equal(used);
    return code as string;
  }

  it("refuses a bad schema name in every entry point before any SQL runs, and quotes the names it accepts", async () => {
    const accepted = new Set<string>();
    for (const s of strings) {
      const asStore = outcome(() => new PostgresJobStore({ db, schema: s }));
      const asDriver = outcome(() =>
        registerPostgresDriver(rootContainer.createChildContainer(), { connectionString: t.connectionString, schema: s, controlConnections: 0 }),
      );
      if (asDriver.ok) await asDriver.value.close();
      expect(asDriver.ok, `PostgresJobStore and registerPostgresDriver disagree on ${label(s)}`).to.equal(asStore.ok);
      if (asStore.ok) {
        accepted.add(s);
        continue;
      }
      expect(asStore.code, label(s)).to.equal(ErrorCode.InvalidName);
      expect((asDriver as { code?: string }).code, label(s)).to.equal(ErrorCode.InvalidName);
      await expectRefusedBeforeSql(s, "migrate", [ErrorCode.InvalidName], () => migrate(db, { schema: s }));
    }
    for (const name of accepted) expect(name, "an accepted schema name").to.match(/^[a-z_][a-z0-9_]{0,62}$/);

    // Migrate a few accepted names for real (reserved words among them), each into a schema of its own.
    const { rows: existing } = await sql<{ nspname: string }>`SELECT nspname FROM pg_namespace`.execute(db);
    const taken = new Set(existing.map((row) => row.nspname));
    const names = [...new Set(["select", "user", ...[...accepted].slice(0, 3)])].filter((name) => !taken.has(name));
    for (const name of names) {
      try {
        await migrate(db, { schema: name });
        const { rows } = await sql<{
          relname: string;
        }>`SELECT relname FROM pg_class WHERE relnamespace = ${name}::regnamespace AND relkind = 'r' ORDER BY relname`.execute(db);
        expect(
          rows.map((row) => row.relname),
          `tables of schema ${JSON.stringify(name)}`,
        ).to.include.members(["jobs", "migrations", "schedules"]);
        const other = new PostgresJobStore({ db, schema: name });
        const { id } = await other.enqueue(buildNewJob(FuzzJob, { schema: name }));
        expect((await other.getJob({ id }))?.payload).to.deep.equal({ schema: name });
      } finally {
        await dropSchema(db, name);
      }
    }
  });

  it("treats a queue name the same in defineJob, enqueue, enqueueMany and claimBatch: refused before SQL, or stored and claimed byte for byte", async () => {
    const base = buildNewJob(FuzzJob, {});
    const accepted: string[] = [];
    for (const s of strings) {
      const kind = outcome(() => defineJob(s));
      if (kind.ok) {
        accepted.push(s);
        continue;
      }
      expect(kind.code, label(s)).to.equal(ErrorCode.InvalidName);
      const raw: NewJob = { ...base, queue: s, payloadJson: JSON.stringify({ queue: "x" }) };
      await expectRefusedBeforeSql(s, "enqueue", [ErrorCode.InvalidName], () => store.enqueue(raw));
      await expectRefusedBeforeSql(s, "enqueueMany", [ErrorCode.InvalidName], () => store.enqueueMany([{ ...base, queue: "fine" }, raw]));
      await expectRefusedBeforeSql(s, "claimBatch", [ErrorCode.InvalidName], () => store.claimBatch({ queue: s, workerId: "fuzz", limit: 1, leaseMs: 60_000 }));
    }
    expect(accepted.length, "some generated queue names are valid").to.be.greaterThan(100);
    const jobs = accepted.map((queue) => ({ ...base, queue, payloadJson: JSON.stringify({ queue }) }));
    for (const batch of chunks(jobs, () => 1, 1_000)) await store.enqueueMany(batch);
    const expected = new Map<string, number>();
    for (const queue of accepted) expected.set(queue, (expected.get(queue) ?? 0) + 1);
    await inParallel([...expected], 8, async ([queue, count]) => {
      const claimed = await store.claimBatch({ queue, workerId: "fuzz", limit: 100, leaseMs: 60_000 });
      expect(claimed.length, label(queue)).to.equal(count);
      for (const job of claimed) {
        expect(job.queue === queue, `queue read back differs for ${label(queue)}`).to.equal(true);
        expect(job.payload, label(queue)).to.deep.equal({ queue });
      }
    });
  });

  it("stores payload text and dedupe keys as data, read back byte for byte, or refuses them before SQL", async () => {
    const payloads: { readonly s: string; readonly job: NewJob }[] = [];
    const keys: { readonly s: string; readonly job: NewJob }[] = [];
    for (const s of strings) {
      const payload = { text: s, list: [s, s.length], keyed: { [s]: s } };
      const built = outcome(() => buildNewJob(FuzzJob, payload));
      if (built.ok) payloads.push({ s, job: built.value });
      else {
        expect(built.code, label(s)).to.equal(ErrorCode.Payload);
        // The same payload, serialised without checks and handed to the store raw, is refused there too.
        const raw = { ...buildNewJob(FuzzJob, {}), payloadJson: JSON.stringify(payload) };
        await expectRefusedBeforeSql(s, "raw enqueue of the payload", [ErrorCode.Payload], () => store.enqueue(raw));
      }
      // The dedupe-key rule every store applies (see CheckedJobStore) sorts the keys; the store must agree with it.
      const keyed = outcome(() => buildNewJob(FuzzJob, { n: 1 }, { dedupeKey: assertStorableKey("dedupeKey", s, MAX_DEDUPE_KEY_LENGTH) }));
      if (keyed.ok) keys.push({ s, job: keyed.value });
      else {
        expect(keyed.code, label(s)).to.equal(ErrorCode.Config);
        const raw = { ...buildNewJob(FuzzJob, { n: 1 }), dedupeKey: s };
        await expectRefusedBeforeSql(s, "raw enqueue of the dedupe key", [ErrorCode.Config], () => store.enqueue(raw));
      }
    }
    expect(payloads.length).to.be.greaterThan(STRINGS / 2);
    expect(keys.length).to.be.greaterThan(STRINGS / 2);

    for (const batch of chunks(payloads, (item) => item.job.payloadJson.length, 4_000_000)) {
      const results = await store.enqueueMany(batch.map((item) => item.job));
      const { rows } = await sql<{ id: string; payload: unknown }>`SELECT id, payload FROM ${sql.id(t.schema, "jobs")}
        WHERE id = ANY(${results.map((result) => result.id)}::bigint[])`.execute(db);
      const byId = new Map(rows.map((row) => [String(row.id), row.payload]));
      batch.forEach((item, index) => {
        const stored = byId.get(results[index]!.id) as { text: string; list: [string, number]; keyed: Record<string, string> };
        expect(stored.text === item.s && stored.list[0] === item.s && stored.keyed[item.s] === item.s, `payload text differs for ${label(item.s)}`).to.equal(
          true,
        );
      });
    }

    for (const batch of chunks(keys, () => 1, 1_000)) {
      const results = await store.enqueueMany(batch.map((item) => item.job));
      const { rows } = await sql<{ id: string; dedupe_key: string }>`SELECT id, dedupe_key FROM ${sql.id(t.schema, "jobs")}
        WHERE id = ANY(${results.map((result) => result.id)}::bigint[])`.execute(db);
      const byId = new Map(rows.map((row) => [String(row.id), row.dedupe_key]));
      batch.forEach((item, index) => {
        expect(byId.get(results[index]!.id) === item.s, `dedupe key differs for ${label(item.s)}`).to.equal(true);
      });
    }
  });

  it("treats a schedule name the same in defineSchedule and syncSchedules: refused before SQL, or stored byte for byte", async () => {
    const accepted = new Map<string, ScheduleSpec>();
    for (const s of strings) {
      const defined = outcome(() => defineSchedule({ name: s, job: FuzzJob, cron: "0 0 1 1 *", payload: { text: s } }));
      if (defined.ok) {
        accepted.set(s, defined.value.spec);
        continue;
      }
      const raw: ScheduleSpec = {
        ...defineSchedule({ name: "fuzz", job: FuzzJob, cron: "0 0 1 1 *", payload: {} }).spec,
        name: s,
        payloadJson: JSON.stringify({ text: s }),
      };
      const code = await expectRefusedBeforeSql(s, "syncSchedules", [ErrorCode.InvalidName, ErrorCode.Payload], () =>
        store.syncSchedules({ schedules: [raw], firstRunAt: (_spec, now) => now }),
      );
      expect(code, `defineSchedule and syncSchedules disagree on ${label(s)}`).to.equal((defined as { code?: string }).code);
    }
    expect(accepted.size).to.be.greaterThan(100);
    await store.syncSchedules({ schedules: [...accepted.values()], firstRunAt: (_spec, now) => new Date(now.getTime() + 86_400_000) });
    const stored = new Map((await store.listSchedules()).map((schedule) => [schedule.name, schedule]));
    for (const [name] of accepted) {
      const schedule = stored.get(name);
      expect(
        schedule !== undefined && (JSON.parse(schedule.payloadJson) as { text: unknown }).text === name,
        `schedule read back differs for ${label(name)}`,
      ).to.equal(true);
    }
  });

  it("records effect keys as data, byte for byte, or refuses them before SQL", async () => {
    const { id: jobId } = await store.enqueue(buildNewJob(FuzzJob, {}));
    const accepted: string[] = [];
    for (const s of strings) {
      if (s.length > 0 && s.length <= 512 && !s.includes("\u0000") && (s as unknown as { isWellFormed(): boolean }).isWellFormed()) {
        accepted.push(s);
        continue;
      }
      await expectRefusedBeforeSql(s, "runEffectOnce", [ErrorCode.Config], () =>
        store.runEffectOnce({ key: s, jobId, resultJson: serializeResult }, async () => "ran"),
      );
    }
    const unique = [...new Set(accepted)];
    await inParallel(unique, 8, async (key) => {
      const first = await store.runEffectOnce({ key, jobId, resultJson: serializeResult }, async () => key);
      expect(first.ran, label(key)).to.equal(true);
    });
    const { rows } = await sql<{ key: string; result: unknown }>`SELECT key, result FROM ${sql.id(t.schema, "effects")}`.execute(db);
    const stored = new Map(rows.map((row) => [row.key, row.result]));
    for (const key of unique) expect(stored.get(key) === key, `effect key or result differs for ${label(key)}`).to.equal(true);
    expect(stored.size).to.equal(unique.length);
  });

  it("leaves no schema, table or function behind outside the suite's own schema, and adds none inside it", async () => {
    const now = await catalogSnapshot(t.db, t.schema);
    const { added, removed } = catalogDifference(catalogBefore, now);
    expect({ added, removed }).to.deep.equal({ added: [], removed: [] });
  });
});
