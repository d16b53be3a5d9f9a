import { expect } from "chai";
import { CancelledError, ErrorCode, errorCodeOf, JobClient, type JobContext, type Logger } from "@stint/core";
import type { KyselyPlugin } from "kysely";
import { NightlyCleanup } from "../../src/jobs/nightly-cleanup";
import { NightlyCleanupWorker, type NightlyCleanupResult } from "../../src/workers/nightly-cleanup-worker";
import { createAppFixture, FAST_BACKOFF, jobRow, writtenWithSql, type AppFixture } from "../support/app-fixture";

const DAY_MS = 86_400_000;

/** Exposes the handler so a test can give it a context of its own. */
class DirectCleanupWorker extends NightlyCleanupWorker {
  run(item: NightlyCleanup, ctx: JobContext): Promise<NightlyCleanupResult> {
    return this.processItem(item, ctx);
  }
}

/** Calls `onDelete` after every DELETE statement the database answered. */
function afterEachDelete(onDelete: () => void): KyselyPlugin {
  return {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      if (args.result.numAffectedRows !== undefined) onDelete();
      return args.result;
    },
  };
}

describe("NightlyCleanupWorker", () => {
  let app: AppFixture;

  beforeEach(async () => {
    app = await createAppFixture();
    const now = Date.now();
    await app.db
      .insertInto("audit_events")
      .values(Array.from({ length: 1_050 }, (_, index) => ({ action: "login", occurred_at: new Date(now - (100 + (index % 30)) * DAY_MS) })))
      .execute();
    await app.db
      .insertInto("audit_events")
      .values(Array.from({ length: 40 }, (_, index) => ({ action: "login", occurred_at: new Date(now - index * DAY_MS) })))
      .execute();
  });
  afterEach(async () => {
    await app.drop();
  });

  async function auditEvents(): Promise<number> {
    const rows = await app.db.selectFrom("audit_events").select("id").execute();
    return rows.length;
  }

  it("deletes the old rows in bounded batches and keeps the recent ones", async () => {
    const { id } = await new JobClient(app.store).enqueue(NightlyCleanup, { target: "audit-events", olderThanDays: 90, batchSize: 100 });

    const summary = await new NightlyCleanupWorker(app.store, app.log, app.db, FAST_BACKOFF).start();

    expect(summary).to.include({ succeeded: 1 });
    expect((await jobRow(app.store, id)).result).to.deep.equal({ target: "audit-events", deleted: 1_050, batches: 11 });
    expect(await auditEvents()).to.equal(40);
  });

  /**
   * Runs the handler with a signal that aborts with `reason` after the
   * third delete; returns what it threw, how many deletes ran and what it logged.
   */
  async function stoppedAfterThreeBatches(reason: Error): Promise<{ failure: unknown; deletes: number; lines: string[] }> {
    const controller = new AbortController();
    let deletes = 0;
    const counted = app.db.withPlugin(
      afterEachDelete(() => {
        deletes += 1;
        if (deletes === 3) controller.abort(reason);
      }),
    );
    const lines: string[] = [];
    const log: Logger = { ...app.log, info: (message) => void lines.push(message), child: () => log };
    const worker = new DirectCleanupWorker(app.store, log, counted, FAST_BACKOFF);
    const ctx: JobContext = {
      job: {
        id: "1",
        queue: NightlyCleanup.name,
        payload: {},
        attempt: 1,
        maxAttempts: 5,
        priority: 0,
        timeoutMs: null,
        createdAt: new Date(),
        runAt: new Date(),
      },
      workerId: "test",
      signal: controller.signal,
      log: Object.assign(() => undefined, log),
      meta: {},
      progress: () => undefined,
      updateMeta: () => Promise.reject(new Error("not used")),
      enqueue: () => Promise.reject(new Error("not used")),
      once: () => Promise.reject(new Error("not used")),
      transaction: () => Promise.reject(new Error("not used")),
      dependencies: () => Promise.reject(new Error("not used")),
      addSteps: () => undefined,
    };
    let failure: unknown;
    await worker.run({ target: "audit-events", olderThanDays: 90, batchSize: 100 }, ctx).catch((thrown: unknown) => {
      failure = thrown;
    });
    return { failure, deletes, lines };
  }

  it("stops between batches when its signal fires, keeping what it deleted", async () => {
    const { failure, deletes, lines } = await stoppedAfterThreeBatches(new Error("shutting down"));
    expect(failure).to.be.instanceOf(Error).with.property("message", "shutting down");
    expect(deletes).to.equal(3);
    expect(lines).to.deep.equal([]);
    expect(await auditEvents()).to.equal(1_090 - 300);
  });

  it("says how far it got when an operator cancels it", async () => {
    const { failure, deletes, lines } = await stoppedAfterThreeBatches(new CancelledError());
    expect(errorCodeOf(failure)).to.equal(ErrorCode.Cancelled);
    expect(deletes).to.equal(3);
    expect(lines).to.deep.equal(["Cancelled after deleting 300 audit-events rows in 3 batches"]);
    expect(await auditEvents()).to.equal(1_090 - 300);
  });

  it("refuses a target outside its allow-list before touching any table", async () => {
    const id = await writtenWithSql(app, NightlyCleanup, { target: "users", olderThanDays: 0 });

    await new NightlyCleanupWorker(app.store, app.log, app.db, FAST_BACKOFF).start();

    const job = await jobRow(app.store, id);
    expect(job.state).to.equal("dead");
    expect(job.lastError).to.contain('payload.target: Invalid option: expected one of "audit-events"|"expired-sessions"|"old-reports"');
    expect(await auditEvents()).to.equal(1_090);
  });
});
