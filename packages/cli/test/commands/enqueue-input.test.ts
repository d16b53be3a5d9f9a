import { execFileSync } from "node:child_process";
import { createWriteStream, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { expect } from "chai";
import { sql } from "kysely";
import { DEFAULT_MAX_PAYLOAD_BYTES, MAX_PAYLOAD_DEPTH } from "@stint/core";
import { ExitCode } from "../../src/index";
import { NDJSON_LINE_SLACK_BYTES } from "../../src/input/ndjson-lines";
import { useSchemaAndDir } from "../helpers/schema-and-dir";
import { stint, type StintOptions } from "../helpers/run-stint";

/** A stdin that can be read only once, in chunks cut mid-line and mid-character. */
function pipe(text: string, chunkBytes = 7): Readable {
  const bytes = Buffer.from(text, "utf8");
  const chunks: Buffer[] = [];
  for (let start = 0; start < bytes.length; start += chunkBytes) chunks.push(bytes.subarray(start, start + chunkBytes));
  return Readable.from(chunks);
}

describe("stint enqueue input", () => {
  const scene = useSchemaAndDir();

  const enqueueFile = (queue: string, file: string, options: StintOptions = {}) =>
    stint(["enqueue", queue, "--file", file, "--schema", scene.test.schema, "--force", "--json"], options);
  const payloadsOf = async (queue: string): Promise<unknown[]> =>
    (await scene.test.store.listJobs({ queue, limit: 1_000 })).map((job) => job.payload).reverse();

  it("reads a pipe on --file - once and enqueues every line it validated", async () => {
    const lines = Array.from({ length: 30 }, (_, n) => JSON.stringify({ n, text: "é😀" }));
    const result = await enqueueFile("piped", "-", { stdin: pipe(`${lines.join("\r\n")}\n`) });
    expect(result.code, result.stderr).to.equal(ExitCode.Ok);
    expect(result.json()).to.include({ file: "stdin", lines: 30, enqueued: 30, interrupted: false });
    expect(await payloadsOf("piped")).to.deep.equal(lines.map((line) => JSON.parse(line) as unknown));
  });

  it("reads a FIFO once", async () => {
    const fifo = join(scene.dir, "jobs.fifo");
    execFileSync("mkfifo", [fifo]);
    const writer = createWriteStream(fifo);
    writer.end('{"from":"fifo","n":1}\n{"from":"fifo","n":2}');
    const result = await enqueueFile("fifo", fifo);
    expect(result.code, result.stderr).to.equal(ExitCode.Ok);
    expect(await payloadsOf("fifo")).to.deep.equal([
      { from: "fifo", n: 1 },
      { from: "fifo", n: 2 },
    ]);
  });

  it("inserts nothing when the last line of a pipe is bad, naming the line", async () => {
    const result = await enqueueFile("bad-tail", "-", { stdin: pipe('{"a":1}\n\n{"a":2}\n{"a":\n') });
    expect(result.code).to.equal(ExitCode.Usage);
    expect(errorLine(result.stderr)).to.match(/^stint: stdin line 4: invalid JSON/);
    expect(await payloadsOf("bad-tail")).to.deep.equal([]);
  });

  it(`refuses a line nested deeper than ${MAX_PAYLOAD_DEPTH} levels, however deep, without overflowing`, async () => {
    const deep = (levels: number): string => `${"[".repeat(levels)}1${"]".repeat(levels)}`;
    for (const levels of [MAX_PAYLOAD_DEPTH + 1, 200_000]) {
      const result = await enqueueFile("deep", "-", { stdin: pipe(`{"ok":1}\n${deep(levels)}\n`, 65_536) });
      expect(result.code).to.equal(ExitCode.Usage);
      expect(errorLine(result.stderr)).to.include(`stint: stdin line 2: payload is not JSON-serialisable: payload[0]`);
      expect(errorLine(result.stderr)).to.include(`nested more than ${MAX_PAYLOAD_DEPTH} levels deep`);
    }
    const ok = await enqueueFile("deep", "-", { stdin: pipe(`${deep(MAX_PAYLOAD_DEPTH)}\n`) });
    expect(ok.code, ok.stderr).to.equal(ExitCode.Ok);
    expect(await scene.test.store.listJobs({ queue: "deep", limit: 10 })).to.have.length(1);
  });

  it("refuses an endless line (/dev/zero) once it passes the line limit, holding one line at most", async () => {
    const limit = DEFAULT_MAX_PAYLOAD_BYTES + NDJSON_LINE_SLACK_BYTES;
    const before = process.memoryUsage().rss;
    const result = await enqueueFile("zero", "/dev/zero");
    expect(result.code).to.equal(ExitCode.Usage);
    expect(errorLine(result.stderr)).to.equal(
      `stint: /dev/zero: line 1 is longer than ${limit} bytes, the limit for one NDJSON line (the queue's payload limit plus ${NDJSON_LINE_SLACK_BYTES} bytes)\n`,
    );
    expect(process.memoryUsage().rss - before).to.be.below(64 * 1_048_576);
    expect(await payloadsOf("zero")).to.deep.equal([]);
  });

  it("refuses bytes that are not UTF-8, naming the line", async () => {
    const invalid = Buffer.concat([Buffer.from('{"a":"ok"}\n{"a":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}\n')]);
    const result = await enqueueFile("latin1", "-", { stdin: Readable.from([invalid]) });
    expect(result.code).to.equal(ExitCode.Usage);
    expect(errorLine(result.stderr)).to.equal("stint: stdin: line 2 is not valid UTF-8 text\n");
    expect(await payloadsOf("latin1")).to.deep.equal([]);
  });

  it("refuses a payload of a line that jsonb cannot store, naming its path", async () => {
    const result = await enqueueFile("nul", "-", { stdin: pipe('{"items":[{"tags":["\\u0000"]}]}\n') });
    expect(result.code).to.equal(ExitCode.Usage);
    expect(errorLine(result.stderr)).to.include("stdin line 1: payload cannot be stored: payload.items[0].tags[0] must not contain NUL");
  });

  it("enqueues 100,000 lines read once from a pipe", async () => {
    const lines = Array.from({ length: 100_000 }, (_, n) => `{"n":${n},"invoice":"INV-${n}"}`).join("\n");
    const before = process.memoryUsage().rss;
    const result = await enqueueFile("hundred-thousand", "-", { stdin: pipe(lines, 65_536) });
    expect(result.code, result.stderr).to.equal(ExitCode.Ok);
    expect(result.json()).to.include({ lines: 100_000, enqueued: 100_000, duplicates: 0 });
    expect(process.memoryUsage().rss - before).to.be.below(256 * 1_048_576);
    const [counts] = await scene.test.store.countByQueue({ queues: ["hundred-thousand"] });
    expect(counts!.counts.queued).to.equal(100_000);
    const [newest] = await scene.test.store.listJobs({ queue: "hundred-thousand", limit: 1 });
    expect(newest!.payload).to.deep.equal({ n: 99_999, invoice: "INV-99999" });
  });

  it("rolls back the batches already written when a later one fails", async () => {
    const jobs = sql.id(scene.test.schema, "jobs");
    const refuse = sql.id(scene.test.schema, "refuse_line_1500");
    await sql`CREATE FUNCTION ${refuse}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.queue = 'all-or-nothing' AND NEW.payload->>'n' = '1500' THEN RAISE EXCEPTION 'refused by a test trigger'; END IF;
        RETURN NEW;
      END $$`.execute(scene.test.db);
    await sql`CREATE TRIGGER refuse_line_1500 BEFORE INSERT ON ${jobs} FOR EACH ROW EXECUTE FUNCTION ${refuse}()`.execute(scene.test.db);
    try {
      const lines = Array.from({ length: 2_000 }, (_, n) => JSON.stringify({ n })).join("\n");
      const result = await enqueueFile("all-or-nothing", "-", { stdin: pipe(lines, 4_096) });
      expect(result.code).to.equal(ExitCode.Failure);
      expect(result.stderr).to.include("refused by a test trigger");
      expect(await payloadsOf("all-or-nothing")).to.deep.equal([]);
    } finally {
      await sql`DROP TRIGGER refuse_line_1500 ON ${jobs}`.execute(scene.test.db);
    }
  });

  it("stops waiting for a pipe that sends nothing when interrupted, enqueueing nothing (exit 130)", async () => {
    const interrupt = new AbortController();
    let reads = 0;
    // One line, then silence: the operator interrupts while the command waits for more.
    const silent = new Readable({
      read() {
        reads += 1;
        if (reads === 1) this.push('{"n":1}\n');
        else interrupt.abort();
      },
    });
    const result = await enqueueFile("silent", "-", { stdin: silent, signal: interrupt.signal });
    expect(result.code).to.equal(ExitCode.Interrupted);
    expect(result.json()).to.include({ enqueued: 0, interrupted: true });
    expect(reads).to.be.at.least(2);
    expect(await payloadsOf("silent")).to.deep.equal([]);
  });

  it("reads a file path once too, and says how many lines it enqueued", async () => {
    const path = join(scene.dir, "two.ndjson");
    writeFileSync(path, '\uFEFF{"n":1}\n{"n":2}');
    const result = await stint(["enqueue", "path-once", "--file", path, "--schema", scene.test.schema, "--force"]);
    expect(result.code, result.stderr).to.equal(ExitCode.Ok);
    expect(result.stdout).to.match(/^Enqueued 2 jobs on path-once from .*two\.ndjson in \d+ms\.\n$/);
    expect(await payloadsOf("path-once")).to.deep.equal([{ n: 1 }, { n: 2 }]);
  });
});

/** The error as its text form prints it, read from the JSON error (`{"error": {"code", "message"}}`) that `--json` writes. */
function errorLine(stderr: string): string {
  const last = stderr.trim().split("\n").at(-1) ?? "";
  return `stint: ${(JSON.parse(last) as { error: { message: string } }).error.message}\n`;
}
