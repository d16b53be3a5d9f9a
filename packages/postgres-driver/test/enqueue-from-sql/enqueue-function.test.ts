import { defineJob, JobClient, type JobRecord } from "@stint/core";
import { eventually, ManualClock } from "@stint/core/testing";
import { expect } from "chai";
import { sql } from "kysely";
import pg from "pg";
import { PostgresWakeupSource } from "../../src";
import { wakeupChannel } from "../../src/wakeup-channel";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { deferred } from "../support/deferred";
import { ScriptedWorker, TaskJob } from "../worker-lifecycle/scripted-worker";
import { JsonText, sqlEnqueue } from "./sql-enqueue";

/** A job kind with no options: what the SQL function's defaults must equal. */
const Plain = defineJob<{ readonly n: number }>("plain");

describe("the enqueue SQL function", () => {
  let test: TestSchema;
  let client: pg.Client;

  beforeEach(async () => {
    test = await createTestSchema({ maxConnections: 4 });
    client = new pg.Client({ connectionString: test.connectionString });
    await client.connect();
  });
  afterEach(async () => {
    await client.end();
    await test.drop();
  });

  async function job(id: string | undefined): Promise<JobRecord> {
    const found = await test.store.getJob({ id: id ?? "0" });
    if (found === undefined) throw new Error(`no job ${id}`);
    return found;
  }

  async function enqueued(outcome: Awaited<ReturnType<typeof sqlEnqueue>>): Promise<JobRecord> {
    expect(outcome.refused, outcome.refused?.message).to.equal(undefined);
    return job(outcome.id);
  }

  /** The fields an enqueue decides, beside the payload and queue. */
  const settings = (record: JobRecord) => ({
    state: record.state,
    priority: record.priority,
    maxAttempts: record.maxAttempts,
    timeoutMs: record.timeoutMs,
    dedupeKey: record.dedupeKey,
    meta: record.meta,
  });

  it("gives a job the library's defaults for a job kind with no options; NULL for an option means its default", async () => {
    const fromLibrary = await job((await new JobClient(test.store).enqueue(Plain, { n: 1 })).id);
    const fromSql = await enqueued(await sqlEnqueue(client, test.schema, Plain.name, { n: 2 }));
    const allNull = await enqueued(
      await sqlEnqueue(
        client,
        test.schema,
        Plain.name,
        { n: 3 },
        {
          run_at: null,
          delay: null,
          priority: null,
          max_attempts: null,
          timeout: null,
          dedupe_key: null,
          dedupe: null,
          meta: null,
          max_payload_bytes: null,
        },
      ),
    );
    expect(settings(fromSql)).to.deep.equal(settings(fromLibrary));
    expect(settings(allNull)).to.deep.equal(settings(fromLibrary));
    expect(fromSql).to.deep.include({ queue: Plain.name, payload: { n: 2 }, maxAttempts: Plain.defaults.maxAttempts, priority: Plain.defaults.priority });
    for (const record of [fromSql, allNull]) {
      expect(Math.abs(record.runAt.getTime() - record.createdAt.getTime()), "due at once").to.be.below(1_000);
    }

    const { rows } = await client.query<{ args: string }>(`SELECT pg_get_function_arguments('"${test.schema}".enqueue'::regproc) AS args`);
    const { maxAttempts, priority, timeoutMs } = Plain.defaults;
    expect(rows[0]!.args).to.include(`priority integer DEFAULT ${priority}, max_attempts integer DEFAULT ${maxAttempts}`);
    expect(rows[0]!.args).to.include(`timeout interval DEFAULT ${timeoutMs === null ? "NULL::interval" : `'${timeoutMs} milliseconds'`}`);
  });

  it("takes every option, in positional and in named notation", async () => {
    const runAt = new Date(Date.now() + 3_600_000);
    const { rows } = await client.query<{ positional: string; named: string }>(
      `SELECT "${test.schema}".enqueue('mail', '{"to": "a@example.com"}', $1, '90 seconds', 5, 3, '30 seconds', 'mail:a', 'keep', '{"tenant": "acme"}')::text AS positional,
              "${test.schema}".enqueue(payload => '{"to": "b@example.com"}', queue => 'mail', run_at => $1, delay => '90 seconds', priority => 5,
                                       max_attempts => 3, timeout => '30 seconds', dedupe_key => 'mail:b', meta => '{"tenant": "acme"}')::text AS named`,
      [runAt],
    );
    for (const [id, to] of [
      [rows[0]!.positional, "a"],
      [rows[0]!.named, "b"],
    ] as const) {
      const record = await job(id);
      expect(record).to.deep.include({
        queue: "mail",
        payload: { to: `${to}@example.com` },
        priority: 5,
        maxAttempts: 3,
        timeoutMs: 30_000,
        dedupeKey: `mail:${to}`,
        meta: { tenant: "acme" },
      });
      expect(record.runAt.getTime(), "run_at plus the delay").to.equal(runAt.getTime() + 90_000);
    }
  });

  it("keeps the holder of a dedupe key and returns its id; replace and debounce update a queued holder and give a running one a follow-up", async () => {
    const first = await sqlEnqueue(client, test.schema, "digest", { edits: 1 }, { dedupe_key: "doc:7", delay: "1 minute" });
    const kept = await sqlEnqueue(client, test.schema, "digest", { edits: 2 }, { dedupe_key: "doc:7" });
    expect(kept.id, "the holder's id").to.equal(first.id);
    expect((await job(first.id)).payload).to.deep.equal({ edits: 1 });

    const replaced = await sqlEnqueue(client, test.schema, "digest", { edits: 3 }, { dedupe_key: "doc:7", dedupe: "replace", priority: 4 });
    expect(replaced.id).to.equal(first.id);
    const afterReplace = await job(first.id);
    expect(afterReplace).to.deep.include({ payload: { edits: 3 }, priority: 4 });
    expect(afterReplace.runAt.getTime(), "the run time replaced too: due now").to.be.below(Date.now() + 30_000);

    const before = (await job(first.id)).runAt.getTime();
    const debounced = await sqlEnqueue(client, test.schema, "digest", { edits: 4 }, { dedupe_key: "doc:7", dedupe: "debounce", delay: "10 minutes" });
    expect(debounced.id).to.equal(first.id);
    expect((await job(first.id)).runAt.getTime() - before, "moved ten minutes after this enqueue").to.be.above(590_000);

    // The library sees the SQL function's holder, and the other way round: one key space.
    expect(await new JobClient(test.store).enqueue(defineJob<{ edits: number }>("digest"), { edits: 5 }, { dedupeKey: "doc:7" })).to.deep.equal({
      id: first.id,
      duplicate: true,
    });

    await sql`UPDATE ${sql.id(test.schema, "jobs")} SET run_at = now() WHERE id = ${first.id}`.execute(test.db);
    const [claimed] = await test.store.claimBatch({ queue: "digest", workerId: "w", limit: 1, leaseMs: 60_000 });
    expect(claimed?.id).to.equal(first.id);
    const onRunning = await sqlEnqueue(client, test.schema, "digest", { edits: 6 }, { dedupe_key: "doc:7", dedupe: "replace" });
    expect(onRunning.id, "a running holder gets a follow-up under replace").to.not.equal(first.id);
    expect(await job(first.id)).to.deep.include({ state: "running", payload: { edits: 4 }, dedupeKey: null });
    const again = await sqlEnqueue(client, test.schema, "digest", { edits: 7 }, { dedupe_key: "doc:7", dedupe: "replace" });
    expect(again.id, "one follow-up, replaced").to.equal(onRunning.id);
    expect(await job(onRunning.id)).to.deep.include({ state: "queued", payload: { edits: 7 }, dedupeKey: "doc:7" });

    await test.store.completeJobs({ workerId: "w", jobs: [{ ...claimed!, resultJson: null, durationMs: 1 }] });
    await test.store.cancelJob({ id: onRunning.id! });
    const fresh = await sqlEnqueue(client, test.schema, "digest", { edits: 8 }, { dedupe_key: "doc:7" });
    expect(fresh.id, "finished jobs free their key").to.not.equal(first.id);
    expect(fresh.id).to.not.equal(onRunning.id);
  });

  for (const dedupe of ["keep", "replace", "debounce"]) {
    it(`${dedupe}: 16 concurrent callers of one key end with exactly one job, whose id they all get`, async () => {
      const callers = Array.from({ length: 16 }, () => new pg.Client({ connectionString: test.connectionString }));
      await Promise.all(callers.map((caller) => caller.connect()));
      try {
        const outcomes = await Promise.all(
          callers.map((caller, n) => sqlEnqueue(caller, test.schema, "digest", { edits: n }, { dedupe_key: "doc:storm", dedupe, delay: "1 minute" })),
        );
        expect(outcomes.map((outcome) => outcome.refused)).to.deep.equal(callers.map(() => undefined));
        expect(new Set(outcomes.map((outcome) => outcome.id)).size).to.equal(1);
        const active = await test.store.listJobs({ queue: "digest", states: ["queued", "running", "failed"], limit: 100 });
        expect(active.map((record) => record.id)).to.deep.equal([outcomes[0]!.id]);
      } finally {
        await Promise.all(callers.map((caller) => caller.end()));
      }
    });
  }

  it("stores an empty or JSON-null meta as none, as the library does", async () => {
    for (const meta of [{}, null]) {
      const record = await enqueued(await sqlEnqueue(client, test.schema, "mail", { n: 1 }, { meta: meta ?? new JsonText("null") }));
      expect(record.meta).to.deep.equal({});
      const { rows } = await sql<{ stored: unknown }>`SELECT meta AS stored FROM ${sql.id(test.schema, "jobs")} WHERE id = ${record.id}`.execute(test.db);
      expect(rows[0]!.stored).to.equal(null);
    }
  });

  it("writes the job with its caller's transaction: invisible to others until the commit, gone after a rollback", async () => {
    await client.query("BEGIN");
    const rolledBack = await sqlEnqueue(client, test.schema, "mail", { n: 1 });
    await client.query("ROLLBACK");
    expect(await test.store.getJob({ id: rolledBack.id! })).to.equal(undefined);

    await client.query("BEGIN");
    const committed = await sqlEnqueue(client, test.schema, "mail", { n: 2 });
    expect(await test.store.getJob({ id: committed.id! }), "not visible before the commit").to.equal(undefined);
    expect(await test.store.claimBatch({ queue: "mail", workerId: "w", limit: 10, leaseMs: 60_000 }), "nor claimable").to.deep.equal([]);
    await client.query("COMMIT");
    expect(await test.store.getJob({ id: committed.id! })).to.deep.include({ state: "queued", payload: { n: 2 } });
  });

  it("wakes listening workers when the transaction commits, not before, and not for a job that is not due", async () => {
    const woken: string[] = [];
    const wakeups = new PostgresWakeupSource({ connectionString: test.connectionString, schema: test.schema });
    try {
      await wakeups.subscribe(["mail", "later", "sentinel"], { onWake: (queue) => woken.push(queue) });
      /** Sends a notification after everything committed so far: once it arrives, those wake-ups have too. */
      const flush = async (): Promise<void> => {
        const before = woken.filter((queue) => queue === "sentinel").length;
        await sql`SELECT pg_notify(${wakeupChannel(test.schema)}, 'sentinel')`.execute(test.db);
        await eventually(() => woken.filter((queue) => queue === "sentinel").length > before, { what: "the sentinel notification" });
      };
      await client.query("BEGIN");
      await sqlEnqueue(client, test.schema, "mail", { n: 1 });
      await sqlEnqueue(client, test.schema, "later", { n: 2 }, { delay: "1 hour" });
      await flush();
      expect(woken, "nothing before the commit").to.not.include("mail");
      await client.query("COMMIT");
      await eventually(() => woken.includes("mail"), { what: "the mail wake-up" });
      await flush();
      expect(woken, "a job due in an hour wakes nobody now").to.not.include("later");
    } finally {
      await wakeups.close();
    }
  });

  it("hands its job to a waiting library worker through the wake-up, not a poll", async () => {
    let handled: { readonly n: number; readonly queue: string } | undefined;
    const idle = deferred();
    const wakeups = new PostgresWakeupSource({ connectionString: test.connectionString, schema: test.schema });
    // A clock that never moves: the worker's idle wait never ends by itself, so only a wake-up makes it claim again.
    const worker = new ScriptedWorker(
      test.store,
      {
        process: async (item, ctx) => {
          handled = { n: item.n, queue: ctx.job.queue };
        },
      },
      { clock: new ManualClock(Date.now()) },
    );
    worker.events.on("queue.drained", () => idle.resolve());
    const stop = new AbortController();
    const running = worker.start({ mode: "loop", wakeups, pollIntervalMs: 3_600_000, signal: stop.signal });
    try {
      await idle.promise;
      const { id } = await sqlEnqueue(client, test.schema, TaskJob.name, { n: 42 });
      expect(await eventually(() => handled, { what: "the worker to run the job" })).to.deep.equal({ n: 42, queue: TaskJob.name });
      await eventually(async () => (await job(id)).state === "succeeded", { what: `job ${id} to succeed` });
    } finally {
      stop.abort();
      await running;
      await wakeups.close();
    }
  });
});
