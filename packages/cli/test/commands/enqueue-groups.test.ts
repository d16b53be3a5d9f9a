import { expect } from "chai";
import { ExitCode } from "@stint/core";
import { useSchemaAndDir } from "../helpers/schema-and-dir";
import { stint } from "../helpers/run-stint";

/** What `stint enqueue --json` prints for one job. */
interface Enqueued {
  readonly id: string;
}

describe("stint enqueue: groups and serial keys", () => {
  const scene = useSchemaAndDir();
  const run = (...args: string[]) => stint([...args, "--schema", scene.test.schema]);
  const enqueue = (...args: string[]) => run("enqueue", ...args, "--force");

  it("stores --group, and --serial-key with --serial-on-dead", async () => {
    const grouped = (await enqueue("sync-mailbox", '{"mailboxId": 7}', "--group", "tenant:acme", "--json")).json() as Enqueued;
    expect(await scene.test.store.getJob({ id: grouped.id })).to.deep.include({ group: "tenant:acme", serialKey: null });
    const serial = (await enqueue("post-entry", "{}", "--serial-key", "account:42", "--serial-on-dead", "release", "--json")).json() as Enqueued;
    expect(await scene.test.store.getJob({ id: serial.id })).to.deep.include({ group: null, serialKey: "account:42" });
  });

  it("refuses both keys at once, a death rule without a line, or an unknown one, naming the flag, and enqueues nothing", async () => {
    const both = await enqueue("refused-entry", "{}", "--group", "a", "--serial-key", "b");
    expect(both.code).to.not.equal(ExitCode.Ok);
    expect(both.stderr).to.include("--serial-key");
    const alone = await enqueue("refused-entry", "{}", "--serial-on-dead", "release");
    expect(alone.code).to.not.equal(ExitCode.Ok);
    expect(alone.stderr).to.include("--serial-on-dead");
    const unknown = await enqueue("refused-entry", "{}", "--serial-key", "a", "--serial-on-dead", "drop");
    expect(unknown.code).to.equal(ExitCode.Usage);
    expect(unknown.stderr).to.include("--serial-on-dead must be hold or release");
    const empty = await enqueue("refused-entry", "{}", "--group", "");
    expect(empty.code).to.not.equal(ExitCode.Ok);
    expect(empty.stderr).to.include("--group");
    const [counts] = await scene.test.store.countByQueue({ queues: ["refused-entry"] });
    expect(counts?.counts.queued ?? 0).to.equal(0);
  });
});
