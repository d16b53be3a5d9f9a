import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { sql } from "kysely";
import { createDatabase, dropSchema, migrate, type DatabaseHandle } from "../../src";
import { ENQUEUE_SIGNATURE } from "../../src/schema/migrations/enqueue-function-windows";
import { migrateTo } from "./migrate-to";

describe("migrations 22 and 24 (enqueue-windows, enqueue-function-groups)", function () {
  this.timeout(60_000);
  const suffix = randomBytes(5).toString("hex");
  const schema = `stint_m21_${suffix}`;
  const caller = `stint_caller_${suffix}`;
  let handle: DatabaseHandle;

  before(async () => {
    handle = createDatabase({ connectionString: process.env["DATABASE_URL"] ?? "" });
  });
  after(async () => {
    await dropSchema(handle.db, schema);
    await sql`DROP ROLE IF EXISTS ${sql.id(caller)}`.execute(handle.db);
    await handle.close();
  });

  it("gives each new enqueue(…) the old one's EXECUTE grants, and no more", async () => {
    const { db } = handle;
    await migrateTo(db, schema, 20);
    const old = `"${schema}".enqueue(text, jsonb, timestamptz, interval, integer, integer, interval, text, text, jsonb, integer)`;
    await sql`CREATE ROLE ${sql.id(caller)}`.execute(db);
    await sql.raw(`REVOKE EXECUTE ON FUNCTION ${old} FROM PUBLIC; GRANT EXECUTE ON FUNCTION ${old} TO "${caller}"`).execute(db);

    await migrate(db, { schema, moveHistory: false });

    const { rows } = await sql<{ caller: boolean; everyone: boolean; old: string | null }>`SELECT
        has_function_privilege(${caller}, ${`"${schema}".enqueue(${ENQUEUE_SIGNATURE})`}, 'EXECUTE') AS caller,
        EXISTS (SELECT FROM pg_proc p, aclexplode(p.proacl) a
                 WHERE p.oid = ${`"${schema}".enqueue(${ENQUEUE_SIGNATURE})`}::regprocedure AND a.grantee = 0) AS everyone,
        to_regprocedure(${old})::text AS old`.execute(db);
    expect(rows[0]).to.deep.equal({ caller: true, everyone: false, old: null });
  });
});
