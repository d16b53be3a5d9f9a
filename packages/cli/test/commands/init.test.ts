import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { ExitCode } from "../../src/index";
import { stint } from "../helpers/run-stint";

/** The repository root, from packages/cli/dist/test/commands. */
const REPOSITORY = join(__dirname, "..", "..", "..", "..", "..");

interface Manifest {
  readonly name: string;
  readonly scripts: Record<string, string>;
  readonly dependencies: Record<string, string>;
  readonly devDependencies?: Record<string, string>;
}

function readManifest(dir: string): Manifest {
  return JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1))
    .sort();
}

describe("stint init", () => {
  let work: string;
  let tarballs: string;

  beforeEach(() => {
    work = mkdtempSync(join(realpathSync(tmpdir()), "stint-init-"));
    tarballs = join(work, "tarballs");
    mkdirSync(tarballs);
    for (const file of ["stint-core-0.1.0.tgz", "stint-postgres-driver-0.1.0.tgz", "stint-cli-0.1.0.tgz"]) writeFileSync(join(tarballs, file), "");
  });
  afterEach(() => rmSync(work, { recursive: true, force: true }));

  it("writes a TypeScript application that depends on the tarballs of --packages-from by relative file: paths", async () => {
    const result = await stint(["init", "My App", "--packages-from", "tarballs"], { cwd: work, env: {} });
    expect(result.code, result.stderr).to.equal(ExitCode.Ok);
    const app = join(work, "My App");
    expect(filesUnder(app)).to.deep.equal([
      ".gitignore",
      "README.md",
      "package.json",
      "src/app.ts",
      "src/enqueue.ts",
      "src/jobs/send-welcome.test.ts",
      "src/jobs/send-welcome.ts",
      "tsconfig.json",
    ]);
    const manifest = readManifest(app);
    expect(manifest.name).to.equal("my-app");
    expect(manifest.dependencies).to.deep.include({
      "@stint/core": "file:../tarballs/stint-core-0.1.0.tgz",
      "@stint/postgres-driver": "file:../tarballs/stint-postgres-driver-0.1.0.tgz",
      "@stint/cli": "file:../tarballs/stint-cli-0.1.0.tgz",
    });
    expect(Object.keys(manifest.scripts)).to.include.members(["build", "test", "migrate", "enqueue", "worker"]);
    expect(result.stdout).to.contain("Wrote a TypeScript stint application in My App:").and.contain("npm install && npm test");
  });

  it("writes plain JavaScript with --js: no tsconfig, no build step, no decorators", async () => {
    const result = await stint(["init", "app", "--js", "--packages-from", "tarballs", "--json"], { cwd: work, env: {} });
    expect(result.code, result.stderr).to.equal(ExitCode.Ok);
    const app = join(work, "app");
    expect(result.json()).to.deep.include({ directory: app, flavour: "js" });
    expect(filesUnder(app)).to.deep.equal([
      ".gitignore",
      "README.md",
      "package.json",
      "src/app.js",
      "src/enqueue.js",
      "src/jobs/send-welcome.js",
      "src/jobs/send-welcome.test.js",
    ]);
    expect(readFileSync(join(app, "src", "jobs", "send-welcome.js"), "utf8"))
      .to.contain("static inject = [JOB_STORE, LOGGER];")
      .and.not.contain("@injectable");
    expect(readManifest(app).scripts).to.not.have.property("build");
  });

  it("packs the stint packages it runs from into vendor/ when no folder is given", async function () {
    this.timeout(60_000);
    const result = await stint(["init", "app"], { cwd: work, env: {} });
    expect(result.code, result.stderr).to.equal(ExitCode.Ok);
    const app = join(work, "app");
    expect(readdirSync(join(app, "vendor")).sort()).to.deep.equal([
      "stint-cli-0.1.0.tgz",
      "stint-core-0.1.0.tgz",
      "stint-dashboard-0.1.0.tgz",
      "stint-postgres-driver-0.1.0.tgz",
    ]);
    expect(readManifest(app).dependencies).to.deep.include({
      "@stint/core": "file:vendor/stint-core-0.1.0.tgz",
      "@stint/dashboard": "file:vendor/stint-dashboard-0.1.0.tgz",
    });
  });

  it("refuses a folder that is not empty and writes nothing into it", async () => {
    const app = join(work, "app");
    mkdirSync(app);
    writeFileSync(join(app, "notes.txt"), "mine");
    const result = await stint(["init", "app", "--packages-from", "tarballs"], { cwd: work, env: {} });
    expect(result.code).to.equal(ExitCode.Config);
    expect(result.stderr).to.contain("is not empty (notes.txt)");
    expect(readdirSync(app)).to.deep.equal(["notes.txt"]);
  });

  it("accepts a folder that holds only .git", async () => {
    mkdirSync(join(work, "app", ".git"), { recursive: true });
    const result = await stint(["init", "app", "--packages-from", "tarballs"], { cwd: work, env: {} });
    expect(result.code, result.stderr).to.equal(ExitCode.Ok);
    expect(existsSync(join(work, "app", "src", "app.ts"))).to.equal(true);
  });

  it("names the package a --packages-from folder lacks", async () => {
    rmSync(join(tarballs, "stint-core-0.1.0.tgz"));
    const result = await stint(["init", "app", "--packages-from", "tarballs"], { cwd: work, env: {} });
    expect(result.code).to.equal(ExitCode.Config);
    expect(result.stderr).to.contain("no tarball of @stint/core");
  });

  it("pins the tools the repository itself builds and tests with", () => {
    const template = JSON.parse(readFileSync(join(REPOSITORY, "packages", "cli", "templates", "ts", "package.template.json"), "utf8")) as Manifest;
    const installed = (name: string): string =>
      (JSON.parse(readFileSync(join(REPOSITORY, "node_modules", name, "package.json"), "utf8")) as { version: string }).version;
    expect(template.devDependencies).to.deep.equal({ "@types/node": installed("@types/node"), typescript: installed("typescript") });
    for (const [name, range] of Object.entries(template.dependencies)) expect(range, name).to.equal(`^${installed(name)}`);
  });
});
