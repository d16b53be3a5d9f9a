import { ConfigError, InvalidNameError } from "@stint/core";
import { assertQueueName, type CancelledAttempt } from "@stint/core/driver";
import { expect } from "chai";
import { sql } from "kysely";
import { PostgresWakeupSource } from "../src";
import { wakeupChannel } from "../src/wakeup-channel";
import { createTestSchema, type TestSchema } from "../src/testing";
import { eventually, newJob, rejectionOf } from "@stint/core/testing";
import { startFreezableProxy } from "./support/freezable-proxy";
import { cancelJob } from "../src/queries/cancel-job";

describe("PostgresWakeupSource", () => {
  let test: TestSchema;
  let wakeups: PostgresWakeupSource;
  let woken: string[];
  let errors: Error[];
  let applicationName: string;

  beforeEach(async () => {
    test = await createTestSchema();
    applicationName = `${test.schema}:listen`;
    woken = [];
    errors = [];
    wakeups = new PostgresWakeupSource({
      connectionString: test.connectionString,
      schema: test.schema,
      applicationName,
      reconnectMinDelayMs: 20,
      onError: (error) => errors.push(error),
    });
  });
  afterEach(async () => {
    await wakeups.close();
    await test.drop();
  });

  async function listenerPids(): Promise<number[]> {
    const { rows } = await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity
      WHERE application_name = ${applicationName}`.execute(test.db);
    return rows.map((row) => row.pid);
  }

  /**
   * Sends a notification for `queue` from another connection and waits for
   * it: notifications arrive in commit order, so anything committed before
   * it has been delivered by then — no sleeping needed to prove a wake-up did not come.
   */
  async function flush(queue = "sentinel"): Promise<void> {
    const before = woken.filter((name) => name === queue).length;
    await sql`SELECT pg_notify(${wakeupChannel(test.schema)}, ${queue})`.execute(test.db);
    await eventually(() => woken.filter((name) => name === queue).length > before, { timeoutMs: 10_000, what: `the ${queue} notification` });
  }

  it("connects only on the first subscribe, and close() ends the connection", async () => {
    expect(await listenerPids()).to.deep.equal([]);
    expect(wakeups.listening).to.equal(false);
    await wakeups.subscribe(["mail"], { onWake: (queue) => woken.push(queue) });
    expect(await listenerPids()).to.have.length(1);
    expect(wakeups.listening).to.equal(true);
    await wakeups.close();
    await eventually(async () => (await listenerPids()).length === 0, { timeoutMs: 10_000, what: "the listener to disconnect" });
    expect(await rejectionOf(wakeups.subscribe(["mail"], { onWake: () => undefined }))).to.be.instanceOf(ConfigError);
  });

  it("wakes a subscriber once an enqueue commits, not before", async () => {
    await wakeups.subscribe(["mail", "sentinel"], { onWake: (queue) => woken.push(queue) });
    await test.db.transaction().execute(async (trx) => {
      await test.store.enqueue(newJob("mail", { n: 1 }), trx);
      await flush();
      expect(woken).to.not.include("mail");
    });
    await eventually(() => woken.includes("mail"), { timeoutMs: 10_000, what: "the mail wake-up" });
  });

  it("does not wake for rolled-back enqueues, jobs not due yet, or queues nobody subscribed to", async () => {
    await wakeups.subscribe(["mail", "sentinel"], { onWake: (queue) => woken.push(queue) });
    await rejectionOf(
      test.db.transaction().execute(async (trx) => {
        await test.store.enqueue(newJob("mail", {}), trx);
        throw new Error("roll back");
      }),
    );
    await test.store.enqueue(newJob("mail", {}, { delayMs: 3_600_000 }));
    await test.store.enqueue(newJob("sms", {}));
    await flush();
    expect(woken).to.deep.equal(["sentinel"]);
  });

  it("wakes each subscribed queue of a batch, and every subscriber of it", async () => {
    const others: string[] = [];
    await wakeups.subscribe(["mail", "sms", "sentinel"], { onWake: (queue) => woken.push(queue) });
    const second = await wakeups.subscribe(["sms"], { onWake: (queue) => others.push(queue) });
    await test.store.enqueueMany([newJob("mail", { n: 1 }), newJob("sms", { n: 2 }), newJob("mail", { n: 3 }), newJob("push", {})]);
    await flush();
    expect(woken.filter((queue) => queue !== "sentinel").sort()).to.deep.equal(["mail", "sms"]);
    expect(others).to.deep.equal(["sms"]);
    await second.close();
    await test.store.enqueue(newJob("sms", {}));
    await flush();
    expect(others).to.deep.equal(["sms"]);
  });

  it("wakes a queue once for a batch of a thousand of its jobs, as for a single one", async () => {
    await wakeups.subscribe(["mail", "sentinel"], { onWake: (queue) => woken.push(queue) });
    await test.store.enqueueMany(Array.from({ length: 1_000 }, (_, n) => newJob("mail", { n })));
    await flush();
    expect(woken.filter((queue) => queue === "mail")).to.deep.equal(["mail"]);
  });

  it("wakes the queue when finished jobs are retried, one by one or in bulk", async () => {
    await wakeups.subscribe(["mail", "sentinel"], { onWake: (queue) => woken.push(queue) });
    const { id } = await test.store.enqueue(newJob("mail", {}, { delayMs: 3_600_000 }));
    await test.store.cancelJob({ id });
    await flush();
    expect(woken).to.not.include("mail");
    expect(await test.store.retryJob({ id })).to.equal(true);
    await eventually(() => woken.includes("mail"), { timeoutMs: 10_000, what: "the wake-up of the retried job" });

    await test.store.enqueue(newJob("sms", {}));
    const [job] = await test.store.claimBatch({ queue: "sms", workerId: "w", limit: 1, leaseMs: 60_000 });
    await test.store.markJobsDead({ workerId: "w", jobs: [{ ...job!, failure: { message: "no", code: null } }] });
    await flush();
    await wakeups.subscribe(["sms"], { onWake: (queue) => woken.push(queue) });
    expect(await test.store.retryDeadJobs({ queue: "sms", limit: 10 })).to.equal(1);
    await eventually(() => woken.includes("sms"), { timeoutMs: 10_000, what: "the wake-up of the bulk retry" });
  });

  it("tells the subscribers of its queue that a running attempt was cancelled, once the cancel commits, and wakes nobody for it", async () => {
    const told: CancelledAttempt[] = [];
    const elsewhere: CancelledAttempt[] = [];
    await wakeups.subscribe(["mail", "sentinel"], { onWake: (queue) => woken.push(queue), onCancelled: (attempt) => told.push(attempt) });
    await wakeups.subscribe(["sms"], { onWake: () => undefined, onCancelled: (attempt) => elsewhere.push(attempt) });
    await test.store.enqueueMany([newJob("mail", { n: 1 }), newJob("mail", { n: 2 }, { delayMs: 3_600_000 })]);
    const [job] = await test.store.claimBatch({ queue: "mail", workerId: 'worker:with odd"id', limit: 1, leaseMs: 60_000 });
    await flush();
    woken.length = 0;
    await test.db.transaction().execute(async (trx) => {
      expect(await cancelJob(trx, test.schema, { id: job!.id })).to.equal(true);
      await flush();
      expect(told, "not before the commit").to.deep.equal([]);
    });
    await eventually(() => told.length > 0, { timeoutMs: 10_000, what: "the cancel notice" });
    expect(told).to.deep.equal([{ id: job!.id, attempt: 1, queue: "mail", workerId: 'worker:with odd"id' }]);
    // A waiting job's cancel has no worker to tell.
    const [waiting] = await test.store.listJobs({ queue: "mail", states: ["queued"], limit: 1 });
    await test.store.cancelJob({ id: waiting!.id });
    await flush();
    expect(told).to.have.length(1);
    expect(elsewhere).to.deep.equal([]);
    expect(woken.filter((queue) => queue !== "sentinel")).to.deep.equal([]);
    expect(errors).to.deep.equal([]);
  });

  it("takes no payload for a cancel notice unless it is one: queue names never start with !", async () => {
    const told: CancelledAttempt[] = [];
    await wakeups.subscribe(["mail", "sentinel"], { onWake: (queue) => woken.push(queue), onCancelled: (attempt) => told.push(attempt) });
    for (const payload of [
      "!cancel",
      "!cancel {",
      '!cancel {"id":"x","attempt":1,"queue":"mail","workerId":"w"}',
      '!cancel {"id":"1","attempt":0,"queue":"mail","workerId":"w"}',
    ]) {
      await sql`SELECT pg_notify(${wakeupChannel(test.schema)}, ${payload})`.execute(test.db);
    }
    await sql`SELECT pg_notify(${wakeupChannel(test.schema)}, ${'!cancel {"id":"7","attempt":2,"queue":"mail","workerId":"w"}'})`.execute(test.db);
    await flush();
    expect(told).to.deep.equal([{ id: "7", attempt: 2, queue: "mail", workerId: "w" }]);
    expect(woken).to.deep.equal(["sentinel"]);
    expect(() => assertQueueName("!cancel")).to.throw(InvalidNameError);
  });

  it("wakes the queue when an operator changes its controls (a resume, a higher cap)", async () => {
    await wakeups.subscribe(["paused-mail"], { onWake: (queue) => woken.push(queue) });
    await test.store.setQueueControls("paused-mail", { paused: true });
    await eventually(() => woken.includes("paused-mail"), { timeoutMs: 10_000, what: "the wake-up of the pause" });
    woken.length = 0;
    await test.store.setQueueControls("paused-mail", { paused: false, maxRunning: 4 });
    await eventually(() => woken.includes("paused-mail"), { timeoutMs: 10_000, what: "the wake-up of the resume" });
  });

  it("reconnects after its connection is terminated, tells and wakes every subscriber, and keeps waking", async () => {
    const events: string[] = [];
    await wakeups.subscribe(["mail"], {
      onWake: (queue) => {
        woken.push(queue);
        events.push(`woken ${queue}`);
      },
      onInterrupted: () => events.push("connection lost"),
    });
    const [pid] = await listenerPids();
    await sql`SELECT pg_terminate_backend(${pid}::integer)`.execute(test.db);
    await eventually(() => woken.includes("mail"), { timeoutMs: 10_000, what: "the catch-up wake-up after reconnecting" });
    expect(events, "told of the loss before the catch-up wake-up").to.deep.equal(["connection lost", "woken mail"]);
    const [newPid] = await eventually(
      async () => {
        const pids = await listenerPids();
        return pids.length === 1 && pids[0] !== pid ? pids : undefined;
      },
      { timeoutMs: 10_000, what: "a new listener connection" },
    );
    expect(newPid).to.not.equal(pid);
    expect(errors.length).to.be.greaterThan(0);
    woken.length = 0;
    await test.store.enqueue(newJob("mail", {}));
    await eventually(() => woken.includes("mail"), { timeoutMs: 10_000, what: "a wake-up on the new connection" });
  });

  it("notices a connection that hangs silently by its health check, and listens again on a new one", async () => {
    const proxy = await startFreezableProxy(test.connectionString);
    const watched = new PostgresWakeupSource({
      connectionString: proxy.connectionString,
      schema: test.schema,
      healthCheckIntervalMs: 200,
      reconnectMinDelayMs: 20,
      onError: (error) => errors.push(error),
    });
    try {
      await watched.subscribe(["mail"], { onWake: (queue) => woken.push(queue) });
      proxy.freeze();
      await eventually(() => woken.includes("mail"), { timeoutMs: 10_000, what: "the catch-up wake-up after the health check failed" });
      woken.length = 0;
      await test.store.enqueue(newJob("mail", {}));
      await eventually(() => woken.includes("mail"), { timeoutMs: 10_000, what: "a wake-up on the new connection" });
    } finally {
      await watched.close();
      await proxy.close();
    }
  });

  it("closes within a bound while its connection hangs silently", async () => {
    const proxy = await startFreezableProxy(test.connectionString);
    try {
      const silent = new PostgresWakeupSource({ connectionString: proxy.connectionString, schema: test.schema, onError: (error) => errors.push(error) });
      await silent.subscribe(["mail"], { onWake: (queue) => woken.push(queue) });
      proxy.freeze();
      const started = Date.now();
      await silent.close();
      expect(Date.now() - started, "the end is given up after a second").to.be.within(900, 2_500);
      expect(silent.listening).to.equal(false);
    } finally {
      await proxy.close();
    }
  });

  it("refuses bad subscriptions and options", async () => {
    expect(await rejectionOf(wakeups.subscribe([], { onWake: () => undefined }))).to.be.instanceOf(ConfigError);
    expect(await rejectionOf(wakeups.subscribe(["mail"], undefined as never))).to.be.instanceOf(ConfigError);
    expect(await rejectionOf(wakeups.subscribe(["mail"], { onWake: () => undefined, onInterrupted: "later" as never }))).to.be.instanceOf(ConfigError);
    expect(() => new PostgresWakeupSource({ connectionString: "" })).to.throw(ConfigError, /`connectionString`/);
    expect(() => new PostgresWakeupSource({ connectionString: test.connectionString, reconnectMinDelayMs: -1 })).to.throw(ConfigError);
    const misspelt = { connectionString: test.connectionString, listen: true } as never;
    expect(() => new PostgresWakeupSource(misspelt)).to.throw(ConfigError, /listen/);
  });

  it("rejects a subscribe whose connection is refused for a reason retrying will not fix", async () => {
    const url = new URL(test.connectionString);
    url.pathname = "/stint_no_such_database";
    const broken = new PostgresWakeupSource({ connectionString: url.toString(), onError: () => undefined });
    try {
      const error = await rejectionOf(broken.subscribe(["mail"], { onWake: () => undefined }));
      expect(error.message).to.match(/stint_no_such_database/);
    } finally {
      await broken.close();
    }
  });
});
