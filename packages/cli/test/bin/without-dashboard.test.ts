import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { ExitCode } from "../../src/index";
import { databaseUrl } from "../helpers/run-stint";

/** packages/cli, from dist/test/bin. */
const PACKAGE_DIR = join(__dirname, "..", "..", "..");
const REPOSITORY = join(PACKAGE_DIR, "..", "..");

/**
 * An application folder as npm leaves it after installing @stint/core,
 * @stint/postgres-driver and @stint/cli but not @stint/dashboard: the
 * repository's third-party packages and the two libraries are linked in,
 * and the CLI is copied (a link would resolve to the repository, where the
 * dashboard is a workspace), so `require("@stint/dashboard")` from the CLI
 * finds nothing.
 */
function installWithoutDashboard(): string {
  const app = mkdtempSync(join(tmpdir(), "stint-no-dashboard-"));
  const modules = join(app, "node_modules");
  mkdirSync(join(modules, "@stint"), { recursive: true });
  for (const entry of readdirSync(join(REPOSITORY, "node_modules"))) {
    if (entry === "@stint" || entry.startsWith(".")) continue;
    symlinkSync(realpathSync(join(REPOSITORY, "node_modules", entry)), join(modules, entry));
  }
  for (const library of ["core", "postgres-driver"]) symlinkSync(realpathSync(join(REPOSITORY, "packages", library)), join(modules, "@stint", library));
  const cli = join(modules, "@stint", "cli");
  for (const shipped of ["package.json", "bin", join("dist", "src")]) cpSync(join(PACKAGE_DIR, shipped), join(cli, shipped), { recursive: true });
  return app;
}

describe("the stint command without @stint/dashboard installed", () => {
  let app: string;
  let test: TestSchema;

  before(async () => {
    app = installWithoutDashboard();
    test = await createTestSchema({ prefix: "stint_cli", maxConnections: 2 });
  });
  after(async () => {
    rmSync(app, { recursive: true, force: true });
    await test.drop();
  });

  function stintIn(args: readonly string[]): { code: number | null; stdout: string; stderr: string } {
    const bin = join(app, "node_modules", "@stint", "cli", "bin", "stint.js");
    const result = spawnSync(process.execPath, [bin, ...args], {
      cwd: app,
      encoding: "utf8",
      env: { PATH: process.env["PATH"] ?? "", DATABASE_URL: databaseUrl() },
      timeout: 60_000,
    });
    return { code: result.status, stdout: result.stdout, stderr: result.stderr };
  }

  it("cannot resolve the dashboard from the installed CLI (the premise of the tests below)", () => {
    const cli = join(app, "node_modules", "@stint", "cli");
    expect(() => require.resolve("@stint/dashboard", { paths: [cli] })).to.throw(/Cannot find module '@stint\/dashboard'/);
    expect(require.resolve("@stint/core", { paths: [cli] })).to.equal(join(realpathSync(join(REPOSITORY, "packages", "core")), "dist", "src", "index.js"));
  });

  it("the CLI's manifest makes the dashboard an optional peer, not a dependency", () => {
    const manifest = JSON.parse(readFileSync(join(PACKAGE_DIR, "package.json"), "utf8")) as Record<string, Record<string, unknown> | undefined>;
    expect(manifest["dependencies"]).not.to.have.property("@stint/dashboard");
    expect(manifest["peerDependencies"]).to.have.property("@stint/dashboard");
    expect(manifest["peerDependenciesMeta"]).to.deep.include({ "@stint/dashboard": { optional: true } });
  });

  it("prints its help, the dashboard's included", () => {
    const help = stintIn(["--help"]);
    expect(help.code, help.stderr).to.equal(ExitCode.Ok);
    expect(help.stdout)
      .to.match(/^Usage: stint <command>/)
      .and.match(/\n\s+dashboard\s/);
    const dashboardHelp = stintIn(["dashboard", "--help"]);
    expect(dashboardHelp.code, dashboardHelp.stderr).to.equal(ExitCode.Ok);
    expect(dashboardHelp.stdout).to.contain("Needs the @stint/dashboard package");
  });

  it("runs the commands that need no dashboard against PostgreSQL", () => {
    const enqueued = stintIn(["enqueue", "no-dashboard", '{"n": 1}', "--force", "--schema", test.schema, "--json"]);
    expect(enqueued.code, enqueued.stderr).to.equal(ExitCode.Ok);
    const status = stintIn(["status", "--schema", test.schema, "--json"]);
    expect(status.code, status.stderr).to.equal(ExitCode.Ok);
    const { queues } = JSON.parse(status.stdout) as { queues: { queue: string; queued: number }[] };
    expect(queues.map(({ queue, queued }) => ({ queue, queued }))).to.deep.equal([{ queue: "no-dashboard", queued: 1 }]);
  });

  it("stint dashboard says how to install the dashboard, as a configuration error (exit 78)", () => {
    const version = (JSON.parse(readFileSync(join(PACKAGE_DIR, "package.json"), "utf8")) as { version: string }).version;
    const run = stintIn(["dashboard", "--no-auth", "--schema", test.schema]);
    expect(run.code).to.equal(ExitCode.Config);
    expect(run.stdout).to.equal("");
    expect(run.stderr).to.match(/^stint: stint dashboard needs @stint\/dashboard, which is not installed \(the other commands work without it\)/);
    expect(run.stderr).to.contain(`npm install ../stint-tarballs/stint-dashboard-${version}.tgz`).and.contain(`npm install @stint/dashboard@${version}`);
    const json = stintIn(["dashboard", "--no-auth", "--schema", test.schema, "--json"]);
    expect(json.code).to.equal(ExitCode.Config);
    expect((JSON.parse(json.stderr) as { error: { code: string } }).error.code).to.equal("STINT_CONFIG");
  });
});

/** An import of the dashboard package in a declaration file, in any of the forms tsc writes. */
const IMPORTS_DASHBOARD = /(?:from\s+|import\s*\(\s*|require\s*\(\s*)["']@stint\/dashboard["']/;

/** A declaration file's code without its doc comments (whose examples may name the package). */
const withoutComments = (text: string): string => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");

describe("the CLI's type declarations", () => {
  it("never import @stint/dashboard, so an application without it type-checks them", () => {
    const declarations = join(PACKAGE_DIR, "dist", "src");
    const offenders = (readdirSync(declarations, { recursive: true }) as string[])
      .filter((file) => file.endsWith(".d.ts"))
      .filter((file) => IMPORTS_DASHBOARD.test(withoutComments(readFileSync(join(declarations, file), "utf8"))));
    expect(offenders).to.deep.equal([]);
  });
});
