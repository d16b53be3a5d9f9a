import { expect } from "chai";
import { ErrorCode, ExitCode } from "@stint/core";
import { useSchemaAndDir } from "../helpers/schema-and-dir";
import { stint } from "../helpers/run-stint";

/** What `stint enqueue --json` prints for one job. */
interface Enqueued {
  readonly id: string;
  readonly duplicate: boolean;
}

describe("stint enqueue: unique windows and deadlines, and jobs show's deadline", () => {
  const scene = useSchemaAndDir();
  const run = (...args: string[]) => stint([...args, "--schema", scene.test.schema]);
  const enqueue = (...args: string[]) => run("enqueue", ...args, "--force");

  it("returns the job of an open unique window, and says so", async () => {
    const first = (await enqueue("send-digest", '{"userId": 7}', "--unique-key", "digest:7", "--unique-for", "1h", "--json")).json() as Enqueued;
    expect(first.duplicate).to.equal(false);
    const second = await enqueue("send-digest", '{"userId": 7}', "--unique-key", "digest:7", "--unique-for", "1h");
    expect(second.code).to.equal(ExitCode.Ok);
    expect(second.stdout).to.equal(`Not enqueued: job ${first.id} of send-digest holds the unique window of key "digest:7".\n`);
  });

  it("refuses a unique key without its window, a window too short, and a unique key with --file", async () => {
    const alone = await enqueue("send-digest", "{}", "--unique-key", "digest:8");
    expect(alone.code).to.equal(ExitCode.Usage);
    expect(alone.stderr).to.include("--unique-key and --unique-for go together");
    const empty = await enqueue("send-digest", "{}", "--unique-key", "digest:8", "--unique-for", "0s");
    expect(empty.code).to.not.equal(ExitCode.Ok);
    expect(empty.stderr).to.include("--unique-for");
    const file = await enqueue("send-digest", "--file", "-", "--unique-key", "digest:8", "--unique-for", "1h");
    expect(file.code).to.equal(ExitCode.Usage);
    expect(file.stderr).to.include("--unique-key cannot be used with --file");
  });

  it("stores --expire-in after the run time and --start-by as given; jobs show prints the deadline, and an expired one as such", async () => {
    const delayed = (await enqueue("send-push", "{}", "--delay", "1h", "--expire-in", "5m", "--json")).json() as Enqueued;
    const job = (await scene.test.store.getJob({ id: delayed.id }))!;
    expect(job.startBy!.getTime() - job.runAt.getTime()).to.equal(300_000);
    const passed = (await enqueue("send-push", "{}", "--start-by", "2001-01-01T00:00:00Z", "--json")).json() as Enqueued;
    expect((await scene.test.store.getJob({ id: passed.id }))!.startBy!.toISOString()).to.equal("2001-01-01T00:00:00.000Z");
    expect(await scene.test.store.cancelExpiredJobs({ limit: 10 })).to.equal(1);

    const shown = await run("jobs", "show", passed.id);
    expect(shown.stdout).to.match(/^start by +2001-01-01 00:00:00Z \(expired\)$/m);
    const json = (await run("jobs", "show", passed.id, "--json")).json() as { startBy: string; errorCode: string; state: string };
    expect(json).to.include({ startBy: "2001-01-01T00:00:00.000Z", errorCode: ErrorCode.Expired, state: "cancelled" });
    expect((await run("jobs", "show", delayed.id)).stdout).to.match(/^start by +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?Z$/m);
  });

  it("refuses --expire-in with --start-by, and an empty unique key naming its flag", async () => {
    const both = await enqueue("send-push", "{}", "--expire-in", "5m", "--start-by", "2031-01-01T00:00:00Z");
    expect(both.code).to.equal(ExitCode.Usage);
    expect(both.stderr).to.include("--expire-in or --start-by, not both");
    const empty = await enqueue("send-digest", "{}", "--unique-key", "", "--unique-for", "1h");
    expect(empty.code).to.not.equal(ExitCode.Ok);
    expect(empty.stderr).to.match(/--unique-key must be a non-empty string/);
  });
});
