import { expect } from "chai";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { sql } from "kysely";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { exampleQueues } from "./example-queues";
import { describeManifest, loadManifests, type Manifest } from "./load-manifests";
import { literalEnv, podSettings } from "./pod-settings";
import { podSpecOf, stintPods } from "./stint-pods";

/** The repository root, from dist/test/k8s: where the image's /app is, and where `--app @stint/examples/app` resolves. */
const REPO_ROOT = join(__dirname, "..", "..", "..", "..", "..");

/** The image's entrypoint, built by `npm run build`. */
const STINT_BIN = join(REPO_ROOT, "packages", "cli", "dist", "src", "bin", "stint.js");

/** The container args of a manifest's pod template. */
function containerArgs(manifest: Manifest): readonly string[] {
  return podSpecOf(manifest)?.containers[0]?.args ?? [];
}

/** A running `node stint.js <args>`, as the container runs it. */
interface StintProcess {
  /** Resolves when it exits, with its code and what it printed. */
  readonly exited: Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>;
  kill(signal: NodeJS.Signals): void;
}

function startStint(args: readonly string[], env: Readonly<Record<string, string>>): StintProcess {
  const child = spawn(process.execPath, [STINT_BIN, ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
  return { exited, kill: (signal) => child.kill(signal) };
}

/** The last line of a run's stdout: the JSON summary `stint run` prints. */
function runSummary(stdout: string): { readonly exitCode: number; readonly stoppedBecause: string; readonly mode: string } {
  const lines = stdout.trim().split("\n");
  return JSON.parse(lines[lines.length - 1]!) as { exitCode: number; stoppedBecause: string; mode: string };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** GETs `url` until it answers (or `attempts` run out); the status code. */
async function statusOf(url: string, attempts = 100): Promise<number> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return (await fetch(url)).status;
    } catch (error) {
      if (attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

describe("the manifests' command lines, run by the stint CLI", function () {
  // Each case starts a node process per manifest (ten worker pods), one after another, as the pods would.
  this.timeout(180_000);
  let test: TestSchema;
  let env: Readonly<Record<string, string>>;

  before(() => {
    if (!existsSync(STINT_BIN)) throw new Error(`${STINT_BIN} is missing: build the workspaces first (npm run build)`);
  });
  beforeEach(async () => {
    test = await createTestSchema();
    env = { DATABASE_URL: test.connectionString, STINT_SCHEMA: test.schema, STINT_LOG_LEVEL: "warn" };
  });
  afterEach(async () => {
    await test.drop();
  });

  const manifestsOf = (kind: string) => loadManifests().filter((manifest) => manifest.kind === kind);

  it("migrates stint's and the app's tables with the migration Job's command line", async () => {
    for (const manifest of manifestsOf("Job")) {
      const { code, stderr } = await startStint(containerArgs(manifest), env).exited;
      expect(code, `${manifest.name}: ${stderr}`).to.equal(0);
    }
    const { rows } = await sql<{ invoices: string | null }>`select to_regclass(${`${test.schema}.invoices`})::text as invoices`.execute(test.db);
    expect(rows[0]?.invoices, "the app's invoices table").to.equal(`${test.schema}.invoices`);
  });

  it("exits 0 with every CronJob's command line, draining the empty queues of the workers", async () => {
    for (const manifest of manifestsOf("CronJob")) {
      const args = containerArgs(manifest);
      const { code, stdout, stderr } = await startStint(args, env).exited;
      expect(code, `${manifest.name}: ${stderr}`).to.equal(0);
      if (args[0] === "run") expect(runSummary(stdout), manifest.name).to.include({ mode: "once", exitCode: 0, stoppedBecause: "drained" });
    }
  });

  it("serves /healthz and /readyz with every Deployment's command line, and exits 0 on SIGTERM", async () => {
    for (const manifest of manifestsOf("Deployment")) {
      // The manifest's own port may be taken on a test machine: only the port number changes.
      const args = [...containerArgs(manifest)];
      const portIndex = args.indexOf("--health-port") + 1;
      expect(portIndex, `${manifest.name} passes --health-port`).to.be.greaterThan(0);
      const port = await freePort();
      args[portIndex] = String(port);
      const stint = startStint(args, env);
      try {
        expect(await statusOf(`http://127.0.0.1:${port}/healthz`), `${manifest.name} /healthz`).to.equal(200);
        expect(await statusOf(`http://127.0.0.1:${port}/readyz`), `${manifest.name} /readyz`).to.equal(200);
      } finally {
        stint.kill("SIGTERM");
      }
      const { code, stdout, stderr } = await stint.exited;
      expect(code, `${manifest.name}: ${stderr}`).to.equal(0);
      expect(runSummary(stdout), manifest.name).to.include({ mode: "loop", exitCode: 0, stoppedBecause: "signal" });
    }
  });

  it("resolves every worker pod's settings from its env and flags with `stint run --print-config`, as core resolves them", async () => {
    const queues = await exampleQueues();
    const workers = stintPods(loadManifests()).filter((pod) => pod.args.command === "run");
    for (const pod of workers) {
      const where = describeManifest(pod.manifest);
      // The pod's own variables, but the test's database and schema.
      const { STINT_SCHEMA: _schema, ...podEnv } = literalEnv(pod);
      const { code, stdout, stderr } = await startStint([...containerArgs(pod.manifest), "--print-config", "--json"], { ...env, ...podEnv }).exited;
      expect(code, `${where}: ${stderr}`).to.equal(0);
      expect(stderr, where).to.equal("");
      const printed = JSON.parse(stdout) as { queues: unknown; logLevel: { value: string }; warnings: unknown };
      const expected = podSettings(pod, queues);
      expect(printed.queues, where).to.deep.equal(expected.queues);
      expect(printed.warnings, where).to.deep.equal([]);
      expect(printed.logLevel.value, `${where}: the app's logger follows STINT_LOG_LEVEL`).to.equal(podEnv["STINT_LOG_LEVEL"]);
    }
  });
});
