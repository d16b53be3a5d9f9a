import { expect } from "chai";
import type { IScaledObject } from "@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { sql } from "kysely";
import { loadManifests } from "./load-manifests";

/** Every postgresql trigger query of the manifests' ScaledObjects, with the queue it names. */
function dueJobQueries(): ReadonlyArray<{ readonly queue: string; readonly query: string }> {
  return loadManifests()
    .filter((manifest) => manifest.kind === "ScaledObject")
    .flatMap((manifest) => (manifest.doc as unknown as IScaledObject).spec.triggers)
    .filter((trigger) => trigger.type === "postgresql")
    .map((trigger) => {
      const query = trigger.metadata["query"] ?? "";
      const queue = /queue = '([^']+)'/.exec(query)?.[1];
      if (queue === undefined) throw new Error(`no queue in KEDA query ${JSON.stringify(query)}`);
      return { queue, query };
    });
}

/** Every node of an `EXPLAIN (FORMAT JSON)` plan, depth first. */
function planNodes(node: Record<string, unknown>): Array<Record<string, unknown>> {
  const children = (node["Plans"] as Array<Record<string, unknown>> | undefined) ?? [];
  return [node, ...children.flatMap(planNodes)];
}

describe("the KEDA queue-depth queries of the manifests", function () {
  this.timeout(30_000);
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema();
  });
  afterEach(async () => {
    await test.drop();
  });

  /** The manifest's query, on the test's schema instead of `stint`. */
  function onTestSchema(query: string): string {
    expect(query.split("stint.jobs"), `${query} reads stint.jobs once`).to.have.length(2);
    return query.replace("stint.jobs", `"${test.schema}".jobs`);
  }

  it("has queries to check", () => {
    expect(dueJobQueries()).to.have.length.greaterThan(0);
  });

  it("counts the due queued and failed jobs of its queue, and nothing else", async () => {
    for (const { queue, query } of dueJobQueries()) {
      const jobs = sql.table(`${test.schema}.jobs`);
      await sql`DELETE FROM ${jobs}`.execute(test.db);
      await sql`
        INSERT INTO ${jobs} (queue, payload, state, run_at, locked_by, locked_until, finished_at)
        VALUES
          (${queue}, '{}', 'queued', now() - interval '1 minute', NULL, NULL, NULL),
          (${queue}, '{}', 'queued', now() - interval '1 hour', NULL, NULL, NULL),
          (${queue}, '{}', 'failed', now() - interval '1 second', NULL, NULL, NULL),
          (${queue}, '{}', 'queued', now() + interval '1 hour', NULL, NULL, NULL),
          (${queue}, '{}', 'failed', now() + interval '1 minute', NULL, NULL, NULL),
          (${queue}, '{}', 'running', now() - interval '1 minute', 'worker-1', now() + interval '1 minute', NULL),
          (${queue}, '{}', 'succeeded', now() - interval '1 minute', NULL, NULL, now()),
          (${queue}, '{}', 'dead', now() - interval '1 minute', NULL, NULL, now()),
          (${`${queue}-other`}, '{}', 'queued', now() - interval '1 minute', NULL, NULL, NULL)
      `.execute(test.db);
      const { rows } = await sql.raw<{ count: string }>(onTestSchema(query)).execute(test.db);
      expect(
        rows.map((row) => Number(row.count)),
        queue,
      ).to.deep.equal([3]);
    }
  });

  it("reads the claim index, never the whole table", async () => {
    for (const { queue, query } of dueJobQueries()) {
      // An empty table makes any plan cheap; with sequential scans priced out,
      // the planner uses the index whenever the query can use it at all.
      const plan = await test.db.transaction().execute(async (trx) => {
        await sql`SET LOCAL enable_seqscan = off`.execute(trx);
        const { rows } = await sql.raw<{ "QUERY PLAN": Array<{ Plan: Record<string, unknown> }> }>(`EXPLAIN (FORMAT JSON) ${onTestSchema(query)}`).execute(trx);
        return rows[0]!["QUERY PLAN"][0]!.Plan;
      });
      const nodes = planNodes(plan);
      expect(
        nodes.map((node) => node["Node Type"]),
        queue,
      ).to.not.include("Seq Scan");
      expect(nodes.map((node) => node["Index Name"]).filter(Boolean), queue).to.deep.equal(["jobs_claim_idx"]);
    }
  });
});
