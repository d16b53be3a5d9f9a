import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { expect } from "chai";

/** packages/core, from dist/test. */
const PACKAGE_DIR = join(__dirname, "..", "..");

/** Runs `script` in a fresh Node process with no polyfill preloaded (mocha's `--require` is not inherited). */
function runFresh(script: string): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, ["-e", script], { cwd: PACKAGE_DIR, encoding: "utf8", env: { PATH: process.env["PATH"] ?? "" } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("the @stint/core entry point", () => {
  it("loads the reflect-metadata polyfill itself, so tsyringe may be imported after it", () => {
    const run = runFresh(`require("@stint/core"); require("tsyringe"); process.stdout.write(typeof Reflect.getMetadata);`);
    expect(run.stderr).to.equal("");
    expect(run.stdout).to.equal("function");
    expect(run.code).to.equal(0);
  });

  it("has a driver entry point that loads on its own and shares no name with the application's", () => {
    const run = runFresh(`
      const driver = require("@stint/core/driver");
      const polyfill = typeof Reflect.getMetadata;
      const app = require("@stint/core");
      const shared = Object.keys(driver).filter((name) => name in app);
      process.stdout.write(JSON.stringify({ polyfill, checked: typeof driver.checkedJobStore, shared }));
    `);
    expect(run.stderr).to.equal("");
    expect(JSON.parse(run.stdout)).to.deep.equal({ polyfill: "function", checked: "function", shared: [] });
  });

  it("has an internal entry point for stint's own packages that loads on its own and shares no name with the public ones", () => {
    const run = runFresh(`
      const internal = require("@stint/core/internal");
      const polyfill = typeof Reflect.getMetadata;
      const publicNames = new Set(["@stint/core", "@stint/core/driver", "@stint/core/testing"].flatMap((entry) => Object.keys(require(entry))));
      const shared = Object.keys(internal).filter((name) => publicNames.has(name));
      process.stdout.write(JSON.stringify({ polyfill, formatDuration: typeof internal.formatDuration, shared }));
    `);
    expect(run.stderr).to.equal("");
    expect(JSON.parse(run.stdout)).to.deep.equal({ polyfill: "function", formatDuration: "function", shared: [] });
  });

  it("keeps the application's entry point to at most 85 values: a helper only stint's packages use goes to @stint/core/internal", () => {
    const run = runFresh(`process.stdout.write(String(Object.keys(require("@stint/core")).length));`);
    expect(run.stderr).to.equal("");
    expect(Number(run.stdout)).to.be.within(1, 85);
  });

  it("resolves injectable classes declared after it, without the application loading the polyfill", () => {
    const run = runFresh(`
      const { JobClient, JOB_STORE } = require("@stint/core");
      const { container } = require("tsyringe");
      const child = container.createChildContainer();
      child.registerInstance(JOB_STORE, {});
      process.stdout.write(String(child.resolve(JobClient) instanceof JobClient));
    `);
    expect(run.stderr).to.equal("");
    expect(run.stdout).to.equal("true");
  });

  it("loads the test kit only from @stint/core/testing, which needs no test runner", () => {
    const run = runFresh(`
      require("@stint/core");
      const loadedByMain = Object.keys(require.cache).some((path) => path.includes("/testing/"));
      const kit = require("@stint/core/testing");
      const mocha = Object.keys(require.cache).some((path) => path.includes("/node_modules/mocha/") || path.includes("/node_modules/chai/"));
      process.stdout.write(JSON.stringify({ loadedByMain, mocha, runJob: typeof kit.runJob, store: typeof kit.InMemoryJobStore }));
    `);
    expect(run.stderr).to.equal("");
    expect(JSON.parse(run.stdout)).to.deep.equal({ loadedByMain: false, mocha: false, runJob: "function", store: "function" });
  });
});
