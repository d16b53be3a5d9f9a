import "reflect-metadata";
import { expect } from "chai";
import { AbstractQueueWorker, createSilentLogger, defineJob, type FailureDecision, type JobContext } from "@stint/core";
import { buildNewJob } from "@stint/core/driver";
import { eventually } from "@stint/core/testing";
import { runCli } from "../../src/index";
import { CapturedStream, stint } from "../helpers/run-stint";
import { useSchemaAndDir } from "../helpers/schema-and-dir";

interface Upload {
  readonly file: string;
  readonly apiKey: string;
}

const UploadFile = defineJob<Upload>("cli-log-upload", { maxAttempts: 3, secretFields: ["apiKey"] });

/** Logs and records its step on the job; the first attempt fails after uploading, the second skips the upload. */
class UploadWorker extends AbstractQueueWorker<Upload> {
  readonly job = UploadFile;

  protected parse(payload: unknown): Upload {
    return payload as Upload;
  }

  protected async processItem(item: Upload, ctx: JobContext): Promise<unknown> {
    if (ctx.meta["step"] !== "uploaded") {
      ctx.log(`Uploading ${item.file} <script>alert(1)</script> \u001b[31mred`, { bytes: 5120 });
      await ctx.updateMeta({ step: "uploaded" });
      ctx.log(`Signed with ${item.apiKey}`);
      throw new Error("the mail server is down");
    }
    ctx.log("Skipped the upload: done by an earlier attempt", { step: ctx.meta["step"] as string });
    return { sent: true };
  }

  protected override handleFailure(): FailureDecision {
    return { action: "retry", delayMs: 0 };
  }
}

const TOKEN = "cli-job-log-token-0123456789";

describe("a handler's log lines and meta updates", () => {
  const scene = useSchemaAndDir();
  let id: string;

  before(async () => {
    const { store } = scene.test;
    ({ id } = await store.enqueue(buildNewJob(UploadFile, { file: "invoice.pdf", apiKey: "sk_live_abcdef" })));
    const worker = new UploadWorker(store, createSilentLogger(), { concurrency: 1 });
    await eventually(
      async () => {
        await worker.start({ mode: "drain" });
        return (await store.getJob({ id }))?.state === "succeeded" ? true : undefined;
      },
      { timeoutMs: 30_000, what: "the job to succeed at its second attempt" },
    );
  });

  it("stint jobs show prints the meta and each attempt's lines, secrets redacted and control characters escaped", async () => {
    const result = await stint(["jobs", "show", id, "--schema", scene.test.schema]);
    expect(result.code, result.stderr).to.equal(0);
    const text = result.stdout;
    expect(text).to.match(/meta:\n {2}\{\n {4}"step": "uploaded"\n {2}\}/);
    const log = text.slice(text.indexOf("log:"), text.indexOf("payload:"));
    expect(log).to.match(
      / {2}attempt 1:\n {4}\d{4}-\d\d-\d\dT[\d:.]+Z {2}Uploading invoice\.pdf <script>alert\(1\)<\/script> \\u001b\[31mred {2}\{"bytes":5120\}\n/,
    );
    expect(log).to.contain("Signed with [redacted]");
    expect(log).to.match(/ {2}attempt 2:\n {4}\S+ {2}Skipped the upload: done by an earlier attempt {2}\{"step":"uploaded"\}/);
    // The payload is printed as stored (the CLI has no job kinds to redact it by); the log lines were redacted as written.
    expect(log).not.to.contain("sk_live_abcdef");
    expect(text).not.to.contain("\u001b");

    const json = JSON.parse((await stint(["jobs", "show", id, "--json", "--schema", scene.test.schema])).stdout) as {
      meta: unknown;
      log: { attempt: number; droppedLines: number; lines: { message: string; fields: unknown }[] }[];
    };
    expect(json.meta).to.deep.equal({ step: "uploaded" });
    expect(json.log.map((entry) => [entry.attempt, entry.droppedLines, entry.lines.length])).to.deep.equal([
      [1, 0, 2],
      [2, 0, 1],
    ]);
    expect(json.log[0]!.lines[0]!.fields).to.deep.equal({ bytes: 5120 });
  });

  it("the dashboard's job page shows the meta and each attempt's lines, escaped", async () => {
    const stdout = new CapturedStream();
    const stop = new AbortController();
    const running = runCli(["dashboard", "--port", "0", "--schema", scene.test.schema], {
      stdout,
      stderr: new CapturedStream(),
      env: { DATABASE_URL: process.env["DATABASE_URL"], STINT_DASHBOARD_TOKEN: TOKEN },
      signal: stop.signal,
    });
    try {
      const url = await eventually(() => /on (http:\/\/127\.0\.0\.1:\d+\/) /.exec(stdout.text)?.[1], { timeoutMs: 20_000, what: "the dashboard's address" });
      const answer = await fetch(`${url}jobs/${id}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(answer.status).to.equal(200);
      const page = await answer.text();
      expect(page)
        .to.contain("<h2>Meta</h2>")
        .and.match(/&quot;step&quot;: &quot;uploaded&quot;|"step": "uploaded"/);
      expect(page).to.contain("<h2>Log</h2>").and.contain('data-job-log="1"').and.contain('data-job-log="2"');
      expect(page).to.contain("Uploading invoice.pdf &lt;script&gt;alert(1)&lt;/script&gt;");
      expect(page).not.to.contain("<script>alert(1)").and.not.to.contain("sk_live_abcdef");
      expect(page).to.contain("Signed with [redacted]").and.contain("Skipped the upload: done by an earlier attempt");
    } finally {
      stop.abort();
    }
    expect(await running).to.equal(0);
  });
});
