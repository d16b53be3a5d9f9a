import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { createDatabase, dropSchema, type DatabaseHandle } from "@stint/postgres-driver";
import { sql } from "kysely";
import { installApp, packLibraries, REPOSITORY, runCommand, userEnvironment } from "./packed-install";

/** The application of docs/use-in-your-app.md. */
const YOUR_APP = join(REPOSITORY, "packages", "examples", "your-app");

function databaseUrl(): string {
  const url = process.env["DATABASE_URL"];
  if (url === undefined) throw new Error("set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres)");
  return url;
}

describe("stint in an application of its own, installed from npm pack tarballs", function () {
  // Packing, installing from the npm cache and a type-check take a while on a small machine.
  this.timeout(180_000);

  let work: string;
  let appDir: string;
  let database: DatabaseHandle;
  const schema = `stint_your_app_${randomBytes(6).toString("hex")}`;

  before(async () => {
    work = mkdtempSync(join(realpathSync(tmpdir()), "stint-your-app-"));
    appDir = join(work, "app");
    database = createDatabase({ connectionString: databaseUrl(), applicationName: schema });
    const tarballs = await packLibraries(join(work, "tarballs"));
    expect(tarballs.map((path) => basename(path)).sort()).to.deep.equal([
      "stint-cli-0.1.0.tgz",
      "stint-core-0.1.0.tgz",
      "stint-dashboard-0.1.0.tgz",
      "stint-postgres-driver-0.1.0.tgz",
    ]);
    await installApp(YOUR_APP, appDir, tarballs);
  });

  after(async () => {
    await dropSchema(database.db, schema);
    await database.close();
    rmSync(work, { recursive: true, force: true });
  });

  it("gets one tsyringe, one reflect-metadata and the stint command", () => {
    for (const library of ["core", "postgres-driver", "cli"]) {
      expect(existsSync(join(appDir, "node_modules", "@stint", library, "node_modules")), `@stint/${library} has copies of its own`).to.equal(false);
    }
    expect(existsSync(join(appDir, "node_modules", "tsyringe", "package.json"))).to.equal(true);
    expect(existsSync(join(appDir, "node_modules", "reflect-metadata", "package.json"))).to.equal(true);
    expect(realpathSync(join(appDir, "node_modules", ".bin", "stint"))).to.equal(join(appDir, "node_modules", "@stint", "cli", "bin", "stint.js"));
  });

  it("type-checks without skipLibCheck, unit-tests its worker with no database, migrates, enqueues and runs a job with `npx stint run --once --app`", async () => {
    const tsconfig = readFileSync(join(appDir, "tsconfig.json"), "utf8");
    expect(tsconfig).to.contain('"experimentalDecorators": true').and.not.contain("skipLibCheck");
    await runCommand("npx", ["--no", "--", "tsc", "-p", "."], appDir);
    expect(readdirSync(join(appDir, "dist")).sort()).to.include.members(["app.js", "enqueue.js", "send-welcome-worker.test.js"]);

    // The worker's unit test (runJob from @stint/core/testing, zod schema) runs with no database to reach.
    const offline = userEnvironment();
    delete offline["DATABASE_URL"];
    const unit = await runCommand("npm", ["test"], appDir, { env: offline });
    expect(unit.stdout)
      .to.match(/^# pass 2$/m)
      .and.match(/^# fail 0$/m);

    const env = userEnvironment({ DATABASE_URL: databaseUrl(), STINT_SCHEMA: schema });
    const migrated = await runCommand("npx", ["--no", "--", "stint", "migrate"], appDir, { env });
    expect(migrated.stdout).to.contain(`Migrated schema "${schema}"`);

    const enqueued = await runCommand("node", ["dist/enqueue.js", "42"], appDir, { env });
    expect(enqueued.stdout).to.match(/^Enqueued job \d+$/m);

    const run = await runCommand("npx", ["--no", "--", "stint", "run", "send-welcome", "--once", "--app", "./dist/app.js"], appDir, { env });
    const report = JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "") as { exitCode: number; totals: { succeeded: number } };
    expect(report).to.deep.include({ exitCode: 0 });
    expect(report.totals.succeeded).to.equal(1);

    const { rows } = await sql<{ queue: string; state: string; result: unknown }>`
      SELECT queue, state, result FROM ${sql.table(`${schema}.all_jobs`)}`.execute(database.db);
    expect(rows).to.deep.equal([{ queue: "send-welcome", state: "succeeded", result: { greeting: "Welcome, user 42!" } }]);
  });
});
