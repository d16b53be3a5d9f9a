import { QueueAdmin, type JobState } from "@stint/core";
import { PostgresJobBrowser } from "@stint/postgres-driver";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { expect } from "chai";
import { sql } from "kysely";
import type { DashboardSources } from "../../src/data/dashboard-sources";
import { readJobDetail } from "../../src/data/job-detail-data";
import { parseJobsFilter } from "../../src/data/jobs-filter";
import { readJobsList } from "../../src/data/jobs-list-data";
import { readOverview } from "../../src/data/overview-data";
import { PayloadPolicy } from "../../src/data/payload-policy";
import { enqueueJobs, makeDeadJobs, makeSucceededJobs } from "../support/seed-jobs";

const QUEUE = "send-invoice";
type FinishedState = Extract<JobState, "succeeded" | "dead" | "cancelled">;
const FINISHED: readonly FinishedState[] = ["succeeded", "dead", "cancelled"];

describe("the dashboard's pages of finished jobs, moved to finished_jobs or left in jobs by an older version", () => {
  let test: TestSchema;
  let sources: DashboardSources;
  const policy = new PayloadPolicy([], "all");
  /** Per state: the job this version finished (in finished_jobs), then the one inserted into jobs as before version 15. */
  const ids = new Map<FinishedState, [moved: string, legacy: string]>();

  /** Inserts a finished row straight into `jobs`, as a version before 15 left every finished job; returns its id. */
  async function insertLegacyRow(state: FinishedState): Promise<string> {
    const { rows } = await sql<{ id: string }>`INSERT INTO ${sql.id(test.schema, "jobs")}
      (queue, payload, state, attempts, locked_by, started_at, finished_at, duration_ms, result, last_error, error_code)
      VALUES (${QUEUE}, '{"legacy":true}', ${state}, 1, 'legacy-worker', now() - interval '1 second', now(), 1000,
              ${state === "succeeded" ? '{"sent":true}' : null}::jsonb, ${state === "succeeded" ? null : `Error: legacy ${state} job`},
              ${state === "succeeded" ? null : "STINT_PERMANENT"})
      RETURNING id::text AS id`.execute(test.db);
    return rows[0]!.id;
  }

  /** Where job `id`'s row is. */
  async function placeOf(id: string): Promise<string[]> {
    const { rows } = await sql<{ place: string }>`SELECT 'jobs' AS place FROM ${sql.id(test.schema, "jobs")} WHERE id = ${id}::bigint
      UNION ALL SELECT 'finished_jobs' FROM ${sql.id(test.schema, "finished_jobs")} WHERE id = ${id}::bigint`.execute(test.db);
    return rows.map((row) => row.place);
  }

  before(async () => {
    test = await createTestSchema({ prefix: "stint_dash" });
    sources = { store: test.store, browser: new PostgresJobBrowser({ db: test.db, schema: test.schema }), admin: new QueueAdmin(test.store) };
    const [succeeded] = await makeSucceededJobs(test.db, test.schema, test.store, QUEUE, 1, () => 60_000);
    const [dead] = await makeDeadJobs(test.store, QUEUE, 1, (id) => `Error: mailbox full for job ${id}`);
    const [cancelled] = await enqueueJobs(test.store, QUEUE, 1);
    expect(await test.store.cancelJob({ id: cancelled! })).to.equal(true);
    ids.set("succeeded", [succeeded!, await insertLegacyRow("succeeded")]);
    ids.set("dead", [dead!, await insertLegacyRow("dead")]);
    ids.set("cancelled", [cancelled!, await insertLegacyRow("cancelled")]);
    for (const [moved, legacy] of ids.values()) {
      expect(await placeOf(moved)).to.deep.equal(["finished_jobs"]);
      expect(await placeOf(legacy)).to.deep.equal(["jobs"]);
    }
  });
  after(async () => {
    await test.drop();
  });

  it("shows each job's page: its state, its result or error, and its attempts", async () => {
    for (const state of FINISHED) {
      const [moved, legacy] = ids.get(state)!;
      for (const id of [moved, legacy]) {
        const detail = await readJobDetail(sources, policy, id);
        expect(detail.job, `job ${id}`).to.include({ id, state, queue: QUEUE });
        if (state === "succeeded") expect(detail.resultText, `job ${id}`).to.contain('"sent": true');
        if (state === "dead") expect(detail.lastError, `job ${id}`).to.match(id === moved ? /mailbox full/ : /legacy dead job/);
      }
    }
    const succeeded = await readJobDetail(sources, policy, ids.get("succeeded")![0]);
    expect(succeeded.attempts.map((attempt) => attempt.outcome)).to.deep.equal(["succeeded"]);
    const dead = await readJobDetail(sources, policy, ids.get("dead")![0]);
    expect(dead.attempts.map((attempt) => attempt.outcome)).to.deep.equal(["dead"]);
  });

  it("lists them by state, with the count of all that match", async () => {
    for (const state of FINISHED) {
      const list = await readJobsList(sources, parseJobsFilter(new URLSearchParams({ state })));
      expect(
        list.page.jobs.map((job) => job.id),
        state,
      ).to.have.members(ids.get(state)!);
      expect(list.total, state).to.deep.equal({ kind: "counted", jobs: 2, atLeast: false });
      const searched = await readJobsList(sources, parseJobsFilter(new URLSearchParams({ state, queue: QUEUE })));
      expect(
        searched.page.jobs.map((job) => job.id),
        `${state} of ${QUEUE}`,
      ).to.have.members(ids.get(state)!);
    }
    const all = await readJobsList(sources, parseJobsFilter(new URLSearchParams()));
    expect(all.total).to.deep.equal({ kind: "counted", jobs: 6, atLeast: false });
  });

  it("counts both dead jobs and both succeeded ones in the overview", async () => {
    const overview = await readOverview(sources);
    const row = overview.queues.find((queue) => queue.queue === QUEUE);
    expect(row).to.include({ dead: 2, succeededLastHour: 2, queued: 0 });
    expect(overview.throughput.coversWindow).to.equal(true);
  });
});
