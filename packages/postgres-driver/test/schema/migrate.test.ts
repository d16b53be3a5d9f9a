import { randomBytes } from "node:crypto";
import { ConfigError, InvalidNameError } from "@stint/core";
import { expect } from "chai";
import { Kysely, PostgresDialect, sql } from "kysely";
import type pg from "pg";
import { createDatabase, dropSchema, migrate, MIGRATIONS, type DatabaseHandle } from "../../src";
import { migrateTo } from "./migrate-to";

const connectionString = process.env["DATABASE_URL"] ?? "";

function randomSchema(): string {
  return `stint_migrate_${randomBytes(5).toString("hex")}`;
}

/** The schema's tables and views, without the day partitions of finished_jobs (see dayPartitionsOf). */
async function tablesOf(db: Kysely<any>, schema: string): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables
    WHERE table_schema = ${schema} AND table_name !~ '^finished_jobs_[0-9]{8}$' ORDER BY table_name`.execute(db);
  return rows.map((row) => row.name);
}

/** The days (YYYYMMDD) that have a partition of finished_jobs. */
async function dayPartitionsOf(db: Kysely<any>, schema: string): Promise<string[]> {
  const { rows } = await sql<{ day: string }>`SELECT substring(c.relname FROM 15) AS day
    FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
   WHERE i.inhparent = to_regclass(${`"${schema}".finished_jobs`}) AND c.relname ~ '^finished_jobs_[0-9]{8}$'
   ORDER BY 1`.execute(db);
  return rows.map((row) => row.day);
}

/** YYYYMMDD of the UTC day `offset` days from today. */
function utcDay(offset: number): string {
  return new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10).replaceAll("-", "");
}

const TABLES = [
  "all_jobs",
  "dead_hooks",
  "effects",
  "finished_jobs",
  "finished_jobs_kept",
  "job_attempts",
  "job_event_listeners",
  "job_groups",
  "job_logs",
  "job_waiters",
  "jobs",
  "leader_leases",
  "migrations",
  "queues",
  "schedules",
  "unique_windows",
  "workflow_deps",
  "workflows",
];

/** A Kysely whose pool fails the test if anything reaches it. */
function poolThatMustNotBeUsed(): { db: Kysely<any>; used: () => boolean } {
  let used = false;
  const refuse = (): never => {
    used = true;
    throw new Error("no SQL may run");
  };
  const pool = { connect: refuse, query: refuse, on: () => pool, end: async () => undefined } as unknown as pg.Pool;
  return { db: new Kysely<any>({ dialect: new PostgresDialect({ pool }) }), used: () => used };
}

describe("migrate", () => {
  let database: DatabaseHandle;
  const created: string[] = [];

  before(() => {
    database = createDatabase({ connectionString });
  });
  after(async () => {
    for (const schema of created) await dropSchema(database.db, schema);
    await database.close();
  });

  it("creates the schema, its tables and records every migration", async () => {
    const schema = randomSchema();
    created.push(schema);
    const result = await migrate(database.db, { schema });
    expect(result).to.deep.equal({ schema, applied: MIGRATIONS.map((m) => m.version), version: MIGRATIONS.length, movedFinishedJobs: 0, interrupted: false });
    expect(await tablesOf(database.db, schema)).to.deep.equal(TABLES);
    const { rows } = await sql<{ version: number; name: string }>`SELECT version, name FROM ${sql.id(schema, "migrations")}`.execute(database.db);
    expect(rows).to.deep.equal(MIGRATIONS.map((m) => ({ version: m.version, name: m.name })));
  });

  it("applies every migration of a new schema in one transaction, and the missing ones of an older schema one transaction each", async () => {
    const transactionsOf = async (schema: string) => {
      const { rows } = await sql<{ n: number }>`SELECT count(DISTINCT applied_at)::integer AS n FROM ${sql.id(schema, "migrations")}`.execute(database.db);
      return rows[0]?.n;
    };
    const fresh = randomSchema();
    const older = randomSchema();
    created.push(fresh, older);
    await migrate(database.db, { schema: fresh });
    expect(await transactionsOf(fresh)).to.equal(1);
    await migrateTo(database.db, older, 14);
    const upgraded = await migrate(database.db, { schema: older });
    expect(upgraded.applied).to.deep.equal(MIGRATIONS.filter((m) => m.version > 14).map((m) => m.version));
    expect(await transactionsOf(older)).to.equal(14 + upgraded.applied.length);
  });

  it("creates the history's day partitions from yesterday to a week ahead", async () => {
    const schema = randomSchema();
    created.push(schema);
    await migrate(database.db, { schema });
    const days = await dayPartitionsOf(database.db, schema);
    // Migrating just before midnight UTC may see two different todays: accept the plan of either.
    const expected = (start: number): string[] => Array.from({ length: 9 }, (_, i) => utcDay(start + i));
    expect([expected(-1).join(), expected(-2).join()]).to.include(days.join());
  });

  it("is idempotent: a second run applies nothing", async () => {
    const schema = randomSchema();
    created.push(schema);
    await migrate(database.db, { schema });
    const again = await migrate(database.db, { schema });
    expect(again).to.deep.equal({ schema, applied: [], version: MIGRATIONS.length, movedFinishedJobs: 0, interrupted: false });
  });

  it("lets two processes migrate one schema at once", async () => {
    const schema = randomSchema();
    created.push(schema);
    const results = await Promise.all([
      migrate({ connectionString }, { schema }),
      migrate({ connectionString }, { schema }),
      migrate({ connectionString }, { schema }),
    ]);
    // They take turns: together they apply each migration once.
    const applied = results.flatMap((result) => result.applied).sort((a, b) => a - b);
    expect(applied).to.deep.equal(MIGRATIONS.map((migration) => migration.version));
    expect(results.every((result) => result.version === MIGRATIONS.length)).to.equal(true);
  });

  it("does not make migrations of different schemas wait for each other", async () => {
    const schemas = [randomSchema(), randomSchema()];
    created.push(...schemas);
    const results = await Promise.all(schemas.map((schema) => migrate(database.db, { schema })));
    expect(results.map((result) => result.applied.length)).to.deep.equal([MIGRATIONS.length, MIGRATIONS.length]);
  });

  it("works with a custom schema name", async () => {
    const schema = `_background_${randomBytes(3).toString("hex")}`;
    created.push(schema);
    await migrate(database.db, { schema });
    expect(await tablesOf(database.db, schema)).to.deep.equal(TABLES);
  });

  it("refuses invalid schema names before any SQL runs", async () => {
    const guarded = poolThatMustNotBeUsed();
    for (const schema of ['x"; drop schema public; --', "Public", "", "a".repeat(64), "1abc", "with space"]) {
      let caught: unknown;
      try {
        await migrate(guarded.db, { schema });
      } catch (thrown) {
        caught = thrown;
      }
      expect(caught, JSON.stringify(schema)).to.be.instanceOf(InvalidNameError);
    }
    expect(guarded.used()).to.equal(false);
  });

  it("refuses a transaction, which cannot hold the migration lock across transactions", async () => {
    let caught: unknown;
    await database.db.transaction().execute(async (trx) => {
      try {
        await migrate(trx, { schema: randomSchema() });
      } catch (thrown) {
        caught = thrown;
      }
    });
    expect(caught).to.be.instanceOf(ConfigError);
  });
});
