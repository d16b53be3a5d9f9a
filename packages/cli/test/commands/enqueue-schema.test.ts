import { join } from "node:path";
import { Readable } from "node:stream";
import { expect } from "chai";
import { ExitCode } from "../../src/index";
import { useSchemaAndDir } from "../helpers/schema-and-dir";
import { stint } from "../helpers/run-stint";

const APP = join(__dirname, "..", "fixtures", "schema-app.js");

describe("stint enqueue --app: the job kind's schema", () => {
  const scene = useSchemaAndDir();
  const enqueue = (...args: string[]) => stint(["enqueue", "cli-welcome", ...args, "--app", APP, "--schema", scene.test.schema]);
  const enqueueLines = (lines: readonly string[]) =>
    stint(["enqueue", "cli-welcome", "--file", "-", "--app", APP, "--schema", scene.test.schema, "--json"], {
      stdin: Readable.from([lines.join("\n") + "\n"]),
    });
  const jobs = () => scene.test.store.listJobs({ queue: "cli-welcome", limit: 10 });

  it("refuses a payload the schema rejects with the validator's messages (exit 2), and enqueues nothing", async () => {
    const result = await enqueue('{"email": "not-an-email", "userId": -3, "extra": true}');
    expect(result.code).to.equal(ExitCode.Usage);
    expect(result.stdout).to.equal("");
    expect(result.stderr).to.match(/^stint: payload of queue "cli-welcome" failed its schema: /);
    expect(result.stderr).to.match(/payload\.email: Invalid email address/);
    expect(result.stderr).to.match(/payload\.userId: Too small/);
    expect(result.stderr).to.match(/payload: Unrecognized key: "extra"/);
    const json = await enqueue("[]", "--json");
    expect(json.code).to.equal(ExitCode.Usage);
    expect((JSON.parse(json.stderr) as { error: { code: string; message: string } }).error).to.deep.include({ code: "STINT_USAGE" });
    expect(await jobs()).to.deep.equal([]);
  });

  it("enqueues a payload the schema accepts, with the kind's defaults", async () => {
    const result = await enqueue('{"email": "ada@example.com", "userId": 7}', "--json");
    expect(result.code, result.stderr).to.equal(ExitCode.Ok);
    const job = await scene.test.store.getJob({ id: (result.json() as { id: string }).id });
    expect(job).to.deep.include({ queue: "cli-welcome", payload: { email: "ada@example.com", userId: 7 }, maxAttempts: 4 });
  });

  it("checks every line of --file before writing any, naming the line that fails", async () => {
    const before = (await jobs()).length;
    const result = await enqueueLines([
      '{"email": "a@example.com", "userId": 1}',
      '{"email": "b@example.com", "userId": 0}',
      '{"email": "c@example.com", "userId": 3}',
    ]);
    expect(result.code).to.equal(ExitCode.Usage);
    expect(JSON.parse(result.stderr)).to.deep.equal({
      error: {
        code: "STINT_USAGE",
        message: 'stdin line 2: payload of queue "cli-welcome" failed its schema: payload.userId: Too small: expected number to be >0',
      },
    });
    expect(await jobs()).to.have.length(before);
    const good = await enqueueLines(['{"email": "a@example.com", "userId": 1}', '{"email": "c@example.com", "userId": 3}']);
    expect(good.code, good.stderr).to.equal(ExitCode.Ok);
    expect(good.json()).to.deep.include({ lines: 2, enqueued: 2 });
    expect(await jobs()).to.have.length(before + 2);
  });
});
