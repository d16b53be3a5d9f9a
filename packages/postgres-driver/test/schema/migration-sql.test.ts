import { randomBytes } from "node:crypto";
import { InvalidNameError } from "@stint/core";
import { expect } from "chai";
import { sql } from "kysely";
import { createDatabase, describeSchema, dropSchema, migrate, migrationSql, MIGRATIONS, type DatabaseHandle } from "../../src";

describe("migrationSql", () => {
  let database: DatabaseHandle;
  const schemas = [`stint_print_${randomBytes(5).toString("hex")}`, `stint_print_${randomBytes(5).toString("hex")}`];

  before(() => {
    database = createDatabase({ connectionString: process.env["DATABASE_URL"] ?? "" });
  });
  after(async () => {
    for (const schema of schemas) await dropSchema(database.db, schema);
    await database.close();
  });

  it("prints every migration with each identifier quoted for the schema", () => {
    const text = migrationSql("background");
    expect(text).to.contain('CREATE SCHEMA IF NOT EXISTS "background";');
    expect(text).to.contain('CREATE TABLE "background"."jobs" (');
    expect(text).to.contain(`INSERT INTO "background"."migrations" (version, name) VALUES (1, 'create-jobs');`);
    expect(text).to.contain(`CREATE TABLE "background"."schedules" (`);
    expect(text).to.contain(`AFTER INSERT ON "background"."jobs"`);
    expect(text).to.not.contain("stint.");
  });

  it("refuses an invalid schema name", () => {
    expect(() => migrationSql('x"; drop schema public; --')).to.throw(InvalidNameError);
  });

  it("prints a script that builds the same schema as migrate", async () => {
    const [printed, migrated] = schemas as [string, string];
    await sql.raw(migrationSql(printed)).execute(database.db);
    await migrate(database.db, { schema: migrated });
    expect(await describeSchema(database.db, printed)).to.equal(await describeSchema(database.db, migrated));
    const again = await migrate(database.db, { schema: printed });
    expect(again).to.include({ version: MIGRATIONS.length }).and.have.property("applied").with.lengthOf(0);
  });
});
