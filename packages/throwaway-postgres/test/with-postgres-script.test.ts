import { expect } from "chai";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { entries, REPOSITORY_ROOT, scratchDirectory } from "./helpers/scratch-directory";
import { eventually } from "@stint/core/testing";
import { runProcess, type RunProcessOptions } from "./helpers/run-process";

const SCRIPT = join(REPOSITORY_ROOT, "scripts", "with-postgres.mjs");
const STARTED = /^with-postgres: started a throwaway PostgreSQL on 127\.0\.0\.1:\d+ in \d+ ms$/m;

describe("scripts/with-postgres.mjs", () => {
  let tmpDir: string;
  beforeEach(() => {
    tmpDir = scratchDirectory();
  });
  afterEach(() => rmSync(tmpDir, { recursive: true, force: true }));

  /** Runs the script with `TMPDIR` set to the test's own directory and no DATABASE_URL unless given. */
  function withPostgres(args: readonly string[], env: NodeJS.ProcessEnv = {}, more: Partial<RunProcessOptions> = {}) {
    const { DATABASE_URL: _ignored, ...inherited } = process.env;
    return runProcess(process.execPath, [SCRIPT, ...args], { cwd: REPOSITORY_ROOT, env: { ...inherited, TMPDIR: tmpDir, ...env }, timeoutMs: 90_000, ...more });
  }

  it("runs the command against a throwaway database stint, passes its exit code through, and leaves nothing behind", async () => {
    const result = await withPostgres(["node", "-e", "console.log(process.env.DATABASE_URL); process.exit(3)"]);
    expect(result.code).to.equal(3);
    expect(result.stdout.trim()).to.match(/^postgres:\/\/postgres:postgres@127\.0\.0\.1:\d+\/stint$/);
    expect(result.stderr).to.match(STARTED);
    expect(entries(tmpDir)).to.deep.equal([]);
  });

  it("starts nothing when DATABASE_URL is set", async () => {
    const url = "postgres://someone@db.example:5432/jobs";
    const result = await withPostgres(["node", "-e", "console.log(process.env.DATABASE_URL)"], { DATABASE_URL: url });
    expect({ code: result.code, stdout: result.stdout.trim(), stderr: result.stderr }).to.deep.equal({ code: 0, stdout: url, stderr: "" });
    expect(entries(tmpDir)).to.deep.equal([]);
  });

  it("passes SIGTERM on to the command and removes the server", async () => {
    let ready = false;
    const result = await withPostgres(
      ["node", "-e", "console.log('ready'); setInterval(() => undefined, 1000)"],
      {},
      {
        onStart: (child) => {
          child.stdout?.on("data", (chunk: Buffer) => {
            if (!ready && chunk.toString().includes("ready")) {
              ready = true;
              child.kill("SIGTERM");
            }
          });
        },
      },
    );
    expect({ ready, code: result.code }).to.deep.equal({ ready: true, code: 128 + 15 });
    expect(entries(tmpDir)).to.deep.equal([]);
  });

  it("stops starting and removes everything when interrupted while the server starts", async () => {
    const result = await withPostgres(
      ["node", "-e", "console.log('the command ran')"],
      {},
      {
        onStart: (child) => {
          eventually(() => entries(tmpDir).length > 0, { what: "the server's temporary directory", timeoutMs: 60_000, intervalMs: 50 }).then(
            () => child.kill("SIGINT"),
            () => child.kill("SIGKILL"),
          );
        },
      },
    );
    expect({ code: result.code, stdout: result.stdout }).to.deep.equal({ code: 128 + 2, stdout: "" });
    expect(entries(tmpDir)).to.deep.equal([]);
  });

  it("fails in one line naming DATABASE_URL, with exit code 70, when the server cannot start", async () => {
    const missing = join(tmpDir, "missing");
    const result = await withPostgres(["node", "-e", "console.log('the command ran')"], { TMPDIR: missing });
    expect(result.code).to.equal(70);
    expect(result.stdout).to.equal("");
    expect(result.stderr).to.match(
      /^with-postgres: could not start a throwaway PostgreSQL: ENOENT: no such file or directory, mkdtemp '.*\/missing\/stint-pg-XXXXXX'\. Set DATABASE_URL=postgres:\/\/… to use a server of your own\.\n$/,
    );
  });
});
