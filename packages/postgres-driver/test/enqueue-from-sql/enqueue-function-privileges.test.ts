import { randomBytes } from "node:crypto";
import { expect } from "chai";
import pg from "pg";
import { migrate, rolesSql } from "../../src";
import { sqlEnqueue } from "./sql-enqueue";

/** `DATABASE_URL` with another user and password. */
function urlFor(role: string, password: string): string {
  const url = new URL(process.env["DATABASE_URL"] ?? "");
  url.username = role;
  url.password = password;
  return url.toString();
}

describe("the enqueue SQL function's rights", function () {
  this.timeout(60_000);
  const suffix = randomBytes(6).toString("hex");
  const schema = `stint_sqlenq_${suffix}`;
  const decoys = `stint_decoys_${suffix}`;
  const migrator = `stint_m_${suffix}`;
  const runtime = `stint_r_${suffix}`;
  /** An application's role: may call the function, and gets rights on stint's tables only as a test grants them. */
  const outsider = `stint_o_${suffix}`;
  const password = randomBytes(12).toString("hex");
  let admin: pg.Client;

  /** A connected client as `role`; the caller ends it. */
  async function connectAs(role: string): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: urlFor(role, password) });
    await client.connect();
    return client;
  }

  before(async () => {
    admin = new pg.Client({ connectionString: process.env["DATABASE_URL"] });
    await admin.connect();
    const { rows } = await admin.query<{ allowed: boolean }>("SELECT rolsuper OR rolcreaterole AS allowed FROM pg_roles WHERE rolname = current_user");
    if (rows[0]?.allowed !== true) throw new Error("this test creates roles: DATABASE_URL must name a superuser or a CREATEROLE role");
    await admin.query(rolesSql(schema, { migrator, runtime }));
    await admin.query(`CREATE ROLE "${outsider}" LOGIN`);
    for (const role of [migrator, runtime, outsider]) await admin.query(`ALTER ROLE "${role}" PASSWORD '${password}'`);
    await migrate({ connectionString: urlFor(migrator, password) }, { schema });
    await admin.query(`GRANT USAGE ON SCHEMA "${schema}" TO "${outsider}"`);
  });
  after(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.query(`DROP SCHEMA IF EXISTS "${decoys}" CASCADE`);
    await admin.query(`DROP OWNED BY "${migrator}", "${runtime}", "${outsider}"`);
    for (const role of [migrator, runtime, outsider]) await admin.query(`DROP ROLE IF EXISTS "${role}"`);
    await admin.end();
  });

  it("runs with its caller's rights and a fixed search_path", async () => {
    const { rows } = await admin.query<{ definer: boolean; config: string[] }>(
      `SELECT prosecdef AS definer, proconfig AS config FROM pg_proc WHERE oid = '"${schema}".enqueue'::regproc`,
    );
    expect(rows[0]).to.deep.equal({ definer: false, config: ["search_path=pg_catalog, pg_temp"] });
  });

  it("lets the runtime role enqueue, as producers run", async () => {
    const client = await connectAs(runtime);
    try {
      const { id, refused } = await sqlEnqueue(client, schema, "mail", { n: 1 }, { dedupe_key: "mail:1" });
      expect(refused?.message).to.equal(undefined);
      expect((await sqlEnqueue(client, schema, "mail", { n: 2 }, { dedupe_key: "mail:1", dedupe: "replace" })).id).to.equal(id);
      const { rows } = await admin.query<{ payload: unknown }>(`SELECT payload FROM "${schema}".jobs WHERE id = $1`, [id]);
      expect(rows[0]?.payload).to.deep.equal({ n: 2 });
    } finally {
      await client.end();
    }
  });

  it("gives a role nothing its own rights on jobs do not: an application role needs INSERT and SELECT, and UPDATE to replace", async () => {
    const client = await connectAs(outsider);
    try {
      const { rows } = await client.query<{ allowed: boolean }>(`SELECT has_function_privilege('"${schema}".enqueue'::regproc::oid, 'EXECUTE') AS allowed`);
      expect(rows[0]?.allowed, "EXECUTE, as every function grants by default").to.equal(true);
      expect((await sqlEnqueue(client, schema, "mail", { n: 3 })).refused, "no rights on jobs").to.include({ code: "42501" });

      // The grants docs/enqueue-from-sql.md gives an application role.
      await admin.query(`GRANT INSERT, SELECT ON "${schema}".jobs TO "${outsider}"`);
      await admin.query(`GRANT USAGE ON SEQUENCE "${schema}".jobs_id_seq TO "${outsider}"`);
      const { id } = await sqlEnqueue(client, schema, "mail", { n: 4 }, { dedupe_key: "mail:4" });
      expect(id).to.match(/^\d+$/);
      expect((await sqlEnqueue(client, schema, "mail", { n: 5 }, { dedupe_key: "mail:4" })).id, "keep").to.equal(id);
      expect((await sqlEnqueue(client, schema, "mail", { n: 6 }, { dedupe_key: "mail:4", dedupe: "replace" })).refused, "replace updates").to.include({
        code: "42501",
      });
      await admin.query(`GRANT UPDATE ON "${schema}".jobs TO "${outsider}"`);
      expect((await sqlEnqueue(client, schema, "mail", { n: 7 }, { dedupe_key: "mail:4", dedupe: "replace" })).id).to.equal(id);
    } finally {
      await client.end();
    }
  });

  it("uses PostgreSQL's own functions whatever the caller's search_path puts first", async () => {
    // Decoys that would let an oversized payload and a bad queue name through if the function looked them up on the caller's path.
    await admin.query(`CREATE SCHEMA "${decoys}"`);
    await admin.query(`GRANT USAGE ON SCHEMA "${decoys}" TO "${runtime}"`);
    await admin.query(`CREATE FUNCTION "${decoys}".octet_length(text) RETURNS integer LANGUAGE sql IMMUTABLE AS 'SELECT 0'`);
    await admin.query(`CREATE FUNCTION "${decoys}".textregexne(text, text) RETURNS boolean LANGUAGE sql IMMUTABLE AS 'SELECT false'`);
    await admin.query(`CREATE OPERATOR "${decoys}".!~ (LEFTARG = text, RIGHTARG = text, FUNCTION = "${decoys}".textregexne)`);
    const client = await connectAs(runtime);
    try {
      await client.query(`SET search_path = "${decoys}", pg_catalog`);
      const { rows } = await client.query<{ decoy: number }>("SELECT octet_length('abc') AS decoy");
      expect(rows[0]?.decoy, "the decoy is what the session's own queries get").to.equal(0);
      expect((await sqlEnqueue(client, schema, "mail", { s: "x".repeat(100) }, { max_payload_bytes: 10 })).refused).to.include({
        code: "22023",
        column: "payload",
      });
      expect((await sqlEnqueue(client, schema, "Bad Queue", { n: 1 })).refused).to.include({ code: "22023", column: "queue" });
    } finally {
      await client.end();
    }
  });
});
