import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { diagnose, MIGRATIONS, migrate, PostgresJobBrowser } from "../../src";

/** `DATABASE_URL` with another database, and another user when given. */
function urlFor(database: string, role?: { readonly name: string; readonly password: string }): string {
  const url = new URL(process.env["DATABASE_URL"] ?? "");
  url.pathname = `/${database}`;
  if (role !== undefined) {
    url.username = role.name;
    url.password = role.password;
  }
  return url.toString();
}

describe("migration 19 where pg_trgm cannot be installed", function () {
  this.timeout(120_000);
  const suffix = randomBytes(6).toString("hex");
  const database = `stint_notrgm_${suffix}`;
  const schema = "stint";
  const role = { name: `stint_notrgm_${suffix}`, password: randomBytes(12).toString("hex") };
  let admin: pg.Client;
  let db: Kysely<any> | undefined;

  before(async () => {
    admin = new pg.Client({ connectionString: process.env["DATABASE_URL"] });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${database}"`);
    await admin.query(`CREATE ROLE "${role.name}" LOGIN PASSWORD '${role.password}'`);
    // The role owns its schema but has no CREATE on the database, so it may not install an extension, trusted or not.
    const inside = new pg.Client({ connectionString: urlFor(database) });
    await inside.connect();
    try {
      await inside.query(`CREATE SCHEMA "${schema}" AUTHORIZATION "${role.name}"`);
      const { rows } = await inside.query<{ installed: boolean }>("SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'pg_trgm') AS installed");
      expect(rows[0]!.installed, "a new database has no pg_trgm").to.equal(false);
    } finally {
      await inside.end();
    }
  });
  after(async () => {
    await db?.destroy();
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin.query(`DROP ROLE IF EXISTS "${role.name}"`);
    await admin.end();
  });

  it("succeeds without the trigram indexes, and the browser searches the error text within a window", async () => {
    const pool = new pg.Pool({ connectionString: urlFor(database, role), max: 2 });
    // The database is dropped with its sessions at the end; an idle connection's error then is expected.
    pool.on("error", () => undefined);
    db = new Kysely({ dialect: new PostgresDialect({ pool }) });
    const result = await migrate(db, { schema });
    expect(result.version).to.equal(MIGRATIONS.at(-1)!.version);
    const { rows } = await sql<{ name: string }>`SELECT indexname AS name FROM pg_indexes
      WHERE schemaname = ${schema} AND indexname IN ('finished_jobs_queue_idx', 'jobs_last_error_trgm_idx', 'finished_jobs_last_error_trgm_idx')`.execute(db);
    expect(rows.map((row) => row.name)).to.deep.equal(["finished_jobs_queue_idx"]);
    const { checks } = await diagnose(db, schema);
    expect(
      checks.find((check) => check.name === "indexes"),
      "the trigram indexes are optional",
    ).to.include({ ok: true });
    await sql`INSERT INTO ${sql.id(schema, "jobs")} (queue, payload, state, attempts, last_error) VALUES
      ('mail', '{}', 'failed', 1, 'Error: gateway timeout'), ('mail', '{}', 'failed', 1, 'Error: card declined')`.execute(db);
    const browser = new PostgresJobBrowser({ db, schema });
    expect(await browser.browseIndexes()).to.deep.equal({ errorText: false });
    const page = await browser.browseJobs({ errorText: "timeout", limit: 50, scanLimit: 1_000 });
    expect(page.jobs.map((job) => job.errorHead)).to.deep.equal(["Error: gateway timeout"]);
    expect(page.searched).to.deep.equal({ scanned: 2, matched: 1, complete: true });
  });
});
