import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { createDatabase, dropSchema, type DatabaseHandle } from "@stint/postgres-driver";
import { sql } from "kysely";
import { guideFiles, guideScript } from "./guide-blocks";
import { REPOSITORY, runCommand, userEnvironment, type CommandOutput } from "./user-commands";

const GUIDE = readFileSync(join(REPOSITORY, "docs", "use-in-your-app.md"), "utf8");

/** Where the guide's files come from; the by-hand road writes each one under the same path in the application. */
const TEMPLATE_PREFIX = "packages/cli/templates/ts/";

/** "Ten minutes" is the promise; a road that takes longer than this on the test machine has gone wrong. */
const ROAD_LIMIT_MS = 10 * 60_000;

/**
 * What a test may take: the user's road, and beside it the test's own checks (a type-check under the
 * newest TypeScript, reading the job back), so that a road over its limit fails on the limit, with
 * the time it took, and not on mocha's timeout.
 */
const TEST_LIMIT_MS = ROAD_LIMIT_MS + 5 * 60_000;

function databaseUrl(): string {
  const url = process.env["DATABASE_URL"];
  if (url === undefined) throw new Error("set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres)");
  return url;
}

/** Runs a script of the guide with bash, stopping at the first failing command. */
function bash(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<CommandOutput> {
  return runCommand("bash", ["-euo", "pipefail", "-c", script], cwd, { env, timeoutMs: 300_000 });
}

/** The run summary `stint run` prints last, from everything the worker script printed. */
function runSummary(output: string): { exitCode: number; totals: { succeeded: number } } {
  const line = output.split("\n").find((candidate) => candidate.startsWith('{"mode":"once"'));
  expect(line, `no run summary in:\n${output}`).to.be.a("string");
  return JSON.parse(line!) as { exitCode: number; totals: { succeeded: number } };
}

describe("a new user's roads of docs/use-in-your-app.md, from npm pack tarballs in empty folders", function () {
  // npm installs from its cache, two type-checks and a real job per road, on a small machine.
  this.timeout(TEST_LIMIT_MS);

  let work: string;
  let newestTsc: string;
  let database: DatabaseHandle;
  const schemas: string[] = [];

  /** The environment of a road's commands: no npm variables of this test run, the test database and a schema of its own. */
  function roadEnvironment(): NodeJS.ProcessEnv {
    const schema = `stint_guide_${randomBytes(6).toString("hex")}`;
    schemas.push(schema);
    return userEnvironment({ DATABASE_URL: databaseUrl(), STINT_SCHEMA: schema });
  }

  async function expectOneSucceededJob(env: NodeJS.ProcessEnv): Promise<void> {
    const { rows } = await sql<{ queue: string; state: string; result: unknown }>`
      SELECT queue, state, result FROM ${sql.table(`${env["STINT_SCHEMA"]!}.all_jobs`)}`.execute(database.db);
    expect(rows).to.deep.equal([{ queue: "send-welcome", state: "succeeded", result: { greeting: "Welcome, user 42!" } }]);
  }

  /** The application type-checks under the newest TypeScript the registry serves, with its own strict tsconfig. */
  async function typeCheckWithNewestTypeScript(appDir: string): Promise<void> {
    await runCommand(process.execPath, [newestTsc, "-p", ".", "--noEmit"], appDir);
  }

  before(async () => {
    work = mkdtempSync(join(realpathSync(tmpdir()), "stint-guide-"));
    database = createDatabase({ connectionString: databaseUrl(), applicationName: "stint-guide-test" });
    const newest = join(work, "newest-typescript");
    mkdirSync(newest);
    writeFileSync(join(newest, "package.json"), '{ "private": true }\n');
    await runCommand("npm", ["install", "--no-audit", "--no-fund", "typescript@latest"], newest);
    newestTsc = join(newest, "node_modules", "typescript", "bin", "tsc");
  });

  after(async () => {
    for (const schema of schemas) await dropSchema(database.db, schema);
    await database.close();
    rmSync(work, { recursive: true, force: true });
  });

  it("has a newest TypeScript to check with that is not the pinned one", async () => {
    const { stdout } = await runCommand(process.execPath, [newestTsc, "--version"], work);
    const pinned = (JSON.parse(readFileSync(join(REPOSITORY, "node_modules", "typescript", "package.json"), "utf8")) as { version: string }).version;
    expect(stdout.trim()).to.match(/^Version \d+\.\d+\.\d+/);
    expect(stdout.trim(), "the registry's newest TypeScript is the pinned one: the second check adds nothing").to.not.equal(`Version ${pinned}`);
  });

  it("stint init: installs, unit-tests with no database, type-checks under the newest TypeScript and runs a real job, in under ten minutes", async () => {
    const appDir = join(work, "init-ts", "my-app");
    mkdirSync(dirname(appDir), { recursive: true });
    const env = roadEnvironment();
    const offline = userEnvironment();
    delete offline["DATABASE_URL"];

    // The guide's init block, run from the checkout, with the new folder in the test's workspace.
    const [setup, withDatabase] = guideScript(GUIDE, "init", { replace: { "../my-app": appDir }, skip: [/^npm ci && npm run build/] }).split(
      /^export DATABASE_URL=.*$/m,
    );
    // The user's road is timed from an empty folder to the job's summary, without the test's own checks.
    const setupStarted = Date.now();
    await bash(setup!, REPOSITORY, offline);
    const setupMs = Date.now() - setupStarted;
    expect(readFileSync(join(appDir, "tsconfig.json"), "utf8"))
      .to.contain('"exactOptionalPropertyTypes": true')
      .and.contain('"skipLibCheck": false');
    for (const library of ["core", "postgres-driver", "cli"]) {
      expect(existsSync(join(appDir, "node_modules", "@stint", library, "node_modules")), `@stint/${library} has copies of its own`).to.equal(false);
    }
    await typeCheckWithNewestTypeScript(appDir);

    const jobStarted = Date.now();
    const run = await bash(withDatabase!, appDir, env);
    const roadMs = setupMs + (Date.now() - jobStarted);
    expect(run.stdout).to.match(/^Enqueued job \d+$/m);
    expect(runSummary(run.stdout)).to.deep.include({ exitCode: 0 });
    await expectOneSucceededJob(env);
    expect(roadMs, `init, install, unit test and one real job took ${(roadMs / 1000).toFixed(1)} s`).to.be.below(ROAD_LIMIT_MS);
  });

  it("stint init --js: plain JavaScript without decorators installs, unit-tests and runs a real job", async () => {
    const appDir = join(work, "init-js", "my-app");
    mkdirSync(dirname(appDir), { recursive: true });
    const env = roadEnvironment();
    await runCommand("npx", ["--no", "--", "stint", "init", appDir, "--js"], REPOSITORY);
    expect(readFileSync(join(appDir, "src", "jobs", "send-welcome.js"), "utf8")).to.not.match(/@\w+\(/);
    const offline = userEnvironment();
    delete offline["DATABASE_URL"];
    const unit = await bash("npm install --no-audit --no-fund && npm test", appDir, offline);
    expect(unit.stdout)
      .to.match(/^# pass 2$/m)
      .and.match(/^# fail 0$/m);
    const run = await bash("npm run migrate && npm run enqueue -- 42 && npm run worker -- --once", appDir, env);
    expect(runSummary(run.stdout)).to.deep.include({ exitCode: 0 });
    await expectOneSucceededJob(env);
  });

  it("by hand: the guide's commands and files build an application that passes its test under both TypeScripts and runs a real job", async () => {
    const road = join(work, "by-hand");
    mkdirSync(road);
    const offline = userEnvironment();
    delete offline["DATABASE_URL"];
    await bash(guideScript(GUIDE, "by-hand", { replace: { "~/src/stint": REPOSITORY } }), road, offline);
    const appDir = join(road, "my-app");

    const files = guideFiles(GUIDE, TEMPLATE_PREFIX);
    expect(Object.keys(files).sort()).to.deep.equal([
      "src/app.ts",
      "src/enqueue.ts",
      "src/jobs/send-welcome.test.ts",
      "src/jobs/send-welcome.ts",
      "tsconfig.json",
    ]);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(appDir, path)), { recursive: true });
      writeFileSync(join(appDir, path), text);
    }
    expect(existsSync(join(appDir, "node_modules", "@stint", "dashboard")), "the by-hand road leaves the dashboard out").to.equal(false);

    const env = roadEnvironment();
    const [beforeDatabase, withDatabase] = guideScript(GUIDE, "run").split(/^export DATABASE_URL=.*$/m);
    const unit = await bash(beforeDatabase!, appDir, offline);
    expect(unit.stdout)
      .to.match(/^# pass 2$/m)
      .and.match(/^# fail 0$/m);
    await typeCheckWithNewestTypeScript(appDir);
    const run = await bash(withDatabase!, appDir, env);
    expect(run.stdout).to.match(/^Enqueued job \d+$/m);
    expect(runSummary(run.stdout)).to.deep.include({ exitCode: 0 });
    await expectOneSucceededJob(env);
  });

  it("states how many lines a user writes for a first job of their own: one file, under 25 lines", () => {
    const lines = readFileSync(join(REPOSITORY, TEMPLATE_PREFIX, "src", "jobs", "send-welcome.ts"), "utf8")
      .trimEnd()
      .split("\n").length;
    expect(lines).to.be.below(25);
    expect(GUIDE).to.contain(`its ${lines} lines`);
  });
});
