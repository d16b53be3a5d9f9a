import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { sql } from "kysely";
import { createDatabase, dropSchema, migrate, type DatabaseHandle } from "../../src";
import { migrateTo } from "./migrate-to";

const connectionString = process.env["DATABASE_URL"] ?? "";

describe("migration 6 (jobs-row-layout)", () => {
  let database: DatabaseHandle;
  const schema = `stint_layout_${randomBytes(5).toString("hex")}`;

  before(() => {
    database = createDatabase({ connectionString });
  });
  after(async () => {
    await dropSchema(database.db, schema);
    await database.close();
  });

  it("keeps every row, id, grant, index and the wake-up trigger, in the new column order", async () => {
    const { db } = database;
    const jobs = sql.id(schema, "jobs");
    await migrateTo(db, schema, 5);
    await sql`INSERT INTO ${jobs} (queue, payload, state, priority, attempts, max_attempts, locked_by, locked_until, dedupe_key, last_error, error_code, result,
                                   started_at, finished_at, duration_ms, meta, progress)
      VALUES ('mail', '{"to":"a"}', 'queued', 0, 0, 25, NULL, NULL, 'k1', NULL, NULL, NULL, NULL, NULL, NULL, '{"traceparent":"00-x"}', NULL),
             ('mail', '{"to":"b"}', 'running', 5, 1, 3, 'w1', now() + interval '1 minute', NULL, NULL, NULL, NULL, now(), NULL, NULL, NULL, '{"done":3}'),
             ('mail', '{"to":"c"}', 'succeeded', 0, 1, 25, 'w1', NULL, NULL, NULL, NULL, '{"ok":true}', now(), now(), 12, NULL, NULL),
             ('sms', '{"to":"d"}', 'dead', 0, 3, 3, 'w2', NULL, NULL, 'boom', 'STINT_PERMANENT', NULL, now(), now(), 40, NULL, NULL)`.execute(db);
    await sql`GRANT SELECT ON ${jobs} TO PUBLIC`.execute(db);
    // start_by and follows are version 22's, group_key and serial 23's, workflow_id, step and waiting_on 26's: the rows are
    // compared as version 6 wrote them.
    const later = ["start_by", "follows", "group_key", "serial", "workflow_id", "step", "waiting_on"];
    const rowsOf = async () =>
      (await sql<Record<string, unknown>>`SELECT to_jsonb(jobs) - ${later}::text[] AS row FROM ${jobs} AS jobs ORDER BY id`.execute(db)).rows;
    const before = await rowsOf();

    // The finished rows stay in jobs, where this layout's checks look for them (version 15's move has its own test).
    const result = await migrate(db, { schema, moveHistory: false });
    expect(result.applied[0]).to.equal(6);
    expect(await rowsOf()).to.deep.equal(before);

    const { rows: columns } = await sql<{ name: string }>`SELECT attname AS name FROM pg_attribute
      WHERE attrelid = ${`${schema}.jobs`}::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`.execute(db);
    // Columns later versions append (start_by, follows: 22; group_key, serial: 23) come after version 6's order.
    const version6 = columns.map((column) => column.name).filter((name) => !later.includes(name));
    expect(version6.slice(-12)).to.deep.equal([
      "attempts",
      "locked_by",
      "started_at",
      "state",
      "updated_at",
      "locked_until",
      "finished_at",
      "duration_ms",
      "result",
      "last_error",
      "error_code",
      "progress",
    ]);
    const { rows: table } = await sql<{ acl: string; options: string[]; analysed: boolean; trigger: boolean }>`
      SELECT c.relacl::text AS acl, c.reloptions AS options, c.reltuples > 0 AS analysed,
             EXISTS (SELECT FROM pg_trigger t WHERE t.tgrelid = c.oid AND t.tgname = 'jobs_notify_inserted') AS trigger
        FROM pg_class c WHERE c.oid = ${`${schema}.jobs`}::regclass`.execute(db);
    expect(table[0]?.acl).to.contain("=r/");
    expect(table[0]?.options).to.include("fillfactor=30");
    expect(table[0]).to.include({ analysed: true, trigger: true });
    const { rows: indexes } = await sql<{
      name: string;
    }>`SELECT indexname AS name FROM pg_indexes WHERE schemaname = ${schema} AND tablename = 'jobs' ORDER BY 1`.execute(db);
    // Migration 19's trigram index on last_error exists only where pg_trgm could be created, 21's start_by index and
    // 23's line and group indexes and 26's workflow and blocked indexes are later versions': none is migration 6's.
    const laterIndexes = ["jobs_last_error_trgm_idx", "jobs_start_by_idx", "jobs_line_idx", "jobs_group_running_idx", "jobs_workflow_idx", "jobs_blocked_idx"];
    const kept = indexes.map((index) => index.name).filter((name) => !laterIndexes.includes(name));
    expect(kept).to.deep.equal(["jobs_claim_idx", "jobs_dedupe_key_idx", "jobs_finished_idx", "jobs_lease_idx", "jobs_pkey"]);

    // The sequence carries on after the copied ids, and the dedupe key is still unique among active jobs.
    const { rows: inserted } = await sql<{ id: string }>`INSERT INTO ${jobs} (queue, payload) VALUES ('mail', '{}') RETURNING id`.execute(db);
    expect(Number(inserted[0]?.id)).to.be.greaterThan(Math.max(...before.map((row) => Number((row["row"] as { id: number }).id))));
    const duplicate = await sql`INSERT INTO ${jobs} (queue, payload, dedupe_key) VALUES ('mail', '{}', 'k1')`.execute(db).then(
      () => "inserted",
      (error: unknown) => (error as Error).message,
    );
    expect(duplicate).to.contain("jobs_dedupe_key_idx");
  });
});
