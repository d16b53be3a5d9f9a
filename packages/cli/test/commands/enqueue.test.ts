import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { ExitCode } from "../../src/index";
import { useSchemaAndDir } from "../helpers/schema-and-dir";
import { stint } from "../helpers/run-stint";

/** What `stint enqueue --json` prints for one job. */
interface Enqueued {
  readonly id: string;
  readonly duplicate: boolean;
  readonly queue: string;
}

describe("stint enqueue", () => {
  const scene = useSchemaAndDir();

  // New queues each time: --force says they are meant (enqueue-queue.test.ts tests the refusal).
  const enqueue = (...args: string[]) => stint(["enqueue", ...args, "--schema", scene.test.schema, "--force"]);
  const writeLines = (name: string, lines: readonly string[]): string => {
    const path = join(scene.dir, name);
    writeFileSync(path, `${lines.join("\n")}\n`);
    return path;
  };

  it("enqueues one job and prints its id", async () => {
    const result = await enqueue("send-invoice", '{"invoiceId": 812}');
    expect(result.code).to.equal(ExitCode.Ok);
    const id = /^Enqueued job (\d+) on send-invoice\.\n$/.exec(result.stdout)?.[1];
    const job = await scene.test.store.getJob({ id: id! });
    expect(job).to.include({ queue: "send-invoice", state: "queued", maxAttempts: 25, priority: 0 });
    expect(job!.payload).to.deep.equal({ invoiceId: 812 });
  });

  it("applies the job options", async () => {
    const runAt = "2031-05-01T10:00:00Z";
    const result = await enqueue("report", "{}", "--run-at", runAt, "--delay", "1h30m", "--priority", "7", "--max-attempts", "3", "--timeout", "45s", "--json");
    expect(result.code).to.equal(ExitCode.Ok);
    const { id, duplicate, queue } = result.json() as Enqueued;
    expect({ duplicate, queue }).to.deep.equal({ duplicate: false, queue: "report" });
    const job = await scene.test.store.getJob({ id });
    expect(job).to.include({ priority: 7, maxAttempts: 3, timeoutMs: 45_000 });
    expect(job!.runAt.toISOString()).to.equal("2031-05-01T11:30:00.000Z");
  });

  it("keeps --meta with the job, and refuses meta that is not an object", async () => {
    const { id } = (await enqueue("send-invoice", '{"invoiceId": 10}', "--meta", '{"tenant": "acme"}', "--json")).json() as Enqueued;
    expect((await scene.test.store.getJob({ id }))!.meta).to.deep.equal({ tenant: "acme" });
    const refused = await enqueue("send-invoice", "{}", "--meta", "[1, 2]");
    expect(refused.code).to.not.equal(ExitCode.Ok);
    expect(refused.stderr).to.include("meta must be a plain object of JSON values, got an array");
    expect((await enqueue("send-invoice", "{}", "--meta", "{nope")).stderr).to.match(/^stint: --meta: invalid JSON/);
  });

  it("returns the active job that holds the dedupe key", async () => {
    const first = (await enqueue("send-invoice", '{"invoiceId": 9}', "--dedupe-key", "invoice:9", "--json")).json() as Enqueued;
    const second = await enqueue("send-invoice", '{"invoiceId": 9}', "--dedupe-key", "invoice:9");
    expect(second.code).to.equal(ExitCode.Ok);
    expect(second.stdout).to.equal(`Not enqueued: job ${first.id} of send-invoice is active with dedupe key "invoice:9".\n`);
  });

  it("replaces a queued holder's payload with --dedupe replace, and refuses an unknown mode naming the flag", async () => {
    const first = (await enqueue("send-invoice", '{"invoiceId": 11}', "--dedupe-key", "invoice:11", "--delay", "1h", "--json")).json() as Enqueued;
    const replaced = await enqueue("send-invoice", '{"invoiceId": 12}', "--dedupe-key", "invoice:11", "--dedupe", "replace");
    expect(replaced.code).to.equal(ExitCode.Ok);
    expect(replaced.stdout).to.equal(`Replaced the payload and run time of queued job ${first.id} of send-invoice (dedupe key "invoice:11").\n`);
    expect((await scene.test.store.getJob({ id: first.id }))!.payload).to.deep.equal({ invoiceId: 12 });
    const refused = await enqueue("send-invoice", "{}", "--dedupe-key", "k", "--dedupe", "merge");
    expect(refused.code).to.not.equal(ExitCode.Ok);
    expect(refused.stderr).to.include("--dedupe must be one of keep, replace, debounce");
  });

  it("refuses invalid JSON with its position (exit 2)", async () => {
    const result = await enqueue("send-invoice", '{"invoiceId": 812');
    expect(result.code).to.equal(ExitCode.Usage);
    expect(result.stderr).to.match(/^stint: payload: invalid JSON: .*position 17/);
  });

  it("names the option whose value the library refuses (exit 78)", async () => {
    const result = await enqueue("send-invoice", "{}", "--priority", "40000");
    expect(result.code).to.equal(ExitCode.Config);
    expect(result.stderr).to.include('--priority must be an integer from -32768 to 32767, got "40000"');
    expect((await enqueue("send-invoice", "{}", "--max-attempts", "0")).stderr).to.include("--max-attempts must be an integer from 1 to 1000");
    expect((await enqueue("send-invoice", "{}", "--run-at", "tomorrow")).stderr).to.include("--run-at must be an ISO 8601 time");
    expect((await enqueue("Send Invoice", "{}")).code).to.equal(ExitCode.Config);
  });

  it("needs exactly one of a payload and --file (exit 2)", async () => {
    expect((await enqueue("send-invoice")).stderr).to.include("missing the JSON payload (or --file PATH)");
    const both = await enqueue("send-invoice", "{}", "--file", "x.ndjson");
    expect(both.code).to.equal(ExitCode.Usage);
    expect(both.stderr).to.include("give either a JSON payload or --file, not both");
  });

  it("enqueues one job per line of a file, a thousand per statement", async () => {
    const lines = Array.from({ length: 2_500 }, (_, n) => JSON.stringify({ n }));
    lines.splice(10, 0, "", "   ");
    const path = writeLines("bulk.ndjson", lines);
    const result = await enqueue("bulk", "--file", path, "--priority", "2", "--json");
    expect(result.code).to.equal(ExitCode.Ok);
    expect(result.json()).to.include({ queue: "bulk", lines: 2_500, enqueued: 2_500, duplicates: 0, interrupted: false });
    const [counts] = await scene.test.store.countByQueue({ queues: ["bulk"] });
    expect(counts!.counts.queued).to.equal(2_500);
    const [newest] = await scene.test.store.listJobs({ queue: "bulk", limit: 1 });
    expect(newest).to.include({ priority: 2 });
    expect(newest!.payload).to.deep.equal({ n: 2_499 });
  });

  it("reports a file in words", async () => {
    const path = writeLines("three.ndjson", ['{"a":1}', '{"a":2}', '{"a":3}']);
    const result = await enqueue("words", "--file", path);
    expect(result.stdout).to.match(/^Enqueued 3 jobs on words from .*three\.ndjson in \d+ms\.\n$/);
  });

  it("names the bad line and inserts nothing when a line is not JSON", async () => {
    const path = writeLines("broken.ndjson", ['{"a":1}', '{"a":2}', "{a:3}"]);
    const result = await enqueue("broken", "--file", path);
    expect(result.code).to.equal(ExitCode.Usage);
    expect(result.stderr).to.match(/^stint: .*broken\.ndjson line 3: invalid JSON: .*position 1/);
    const [counts] = await scene.test.store.countByQueue({ queues: ["broken"] });
    expect(counts!.counts.queued).to.equal(0);
  });

  it("reads the file relative to the working directory and says when it cannot", async () => {
    writeLines("relative.ndjson", ['{"r":1}']);
    const ok = await stint(["enqueue", "relative", "--file", "relative.ndjson", "--schema", scene.test.schema, "--force"], { cwd: scene.dir });
    expect(ok.code).to.equal(ExitCode.Ok);
    const missing = await stint(["enqueue", "relative", "--file", "nope.ndjson", "--schema", scene.test.schema, "--force"], { cwd: scene.dir });
    expect(missing.code).to.equal(ExitCode.Usage);
    expect(missing.stderr).to.include("cannot read nope.ndjson: ENOENT");
  });

  it("refuses --dedupe-key with --file", async () => {
    const result = await enqueue("bulk", "--file", "x.ndjson", "--dedupe-key", "k");
    expect(result.code).to.equal(ExitCode.Usage);
    expect(result.stderr).to.include("--dedupe-key cannot be used with --file");
  });

  it("enqueues nothing when interrupted (exit 130)", async () => {
    const path = writeLines(
      "interrupted.ndjson",
      Array.from({ length: 2_100 }, (_, n) => JSON.stringify({ n })),
    );
    const interrupt = new AbortController();
    interrupt.abort();
    const result = await stint(["enqueue", "interrupted", "--file", path, "--schema", scene.test.schema, "--force", "--json"], { signal: interrupt.signal });
    expect(result.code).to.equal(ExitCode.Interrupted);
    expect(result.json()).to.include({ enqueued: 0, interrupted: true });
    expect(await scene.test.store.listJobs({ queue: "interrupted", limit: 1 })).to.deep.equal([]);
  });

  it("draws a progress bar on a terminal", async () => {
    const path = writeLines(
      "tty.ndjson",
      Array.from({ length: 1_500 }, (_, n) => JSON.stringify({ n })),
    );
    const result = await stint(["enqueue", "tty", "--file", path, "--schema", scene.test.schema, "--force"], { tty: true });
    expect(result.code).to.equal(ExitCode.Ok);
    expect(result.stderr).to.include("enqueue tty [");
    expect(result.stderr).to.include("1,500/1,500 jobs");
  });
});
