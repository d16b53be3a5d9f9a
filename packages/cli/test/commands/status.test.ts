import { expect } from "chai";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { ExitCode } from "../../src/index";
import { stint } from "../helpers/run-stint";
import { enqueueJobs, makeDeadJobs, makeRunningJobs, makeSucceededJobs } from "../helpers/job-states";

/** What `stint status --json` prints (the fields these tests read). */
interface StatusJson {
  readonly schema: string;
  readonly queues: readonly { readonly queue: string; readonly oldestDueAgeMs: number | null; readonly completedLast5m: number | null }[];
}

describe("stint status", () => {
  let test: TestSchema;

  before(async () => {
    test = await createTestSchema({ prefix: "stint_cli", maxConnections: 4 });
    await enqueueJobs(test.store, "alpha", 3);
    await makeRunningJobs(test.store, "beta", 2);
    await makeDeadJobs(test.store, "beta", 1);
    await makeSucceededJobs(test.store, "beta", 4);
  });
  after(() => test.drop());

  it("says when the schema has no jobs", async () => {
    const empty = await createTestSchema({ prefix: "stint_cli", maxConnections: 2 });
    try {
      const result = await stint(["status", "--schema", empty.schema]);
      expect(result.code).to.equal(ExitCode.Ok);
      expect(result.stdout).to.equal(`No jobs in schema "${empty.schema}".\n`);
    } finally {
      await empty.drop();
    }
  });

  it("prints a row per queue with its counts and lag", async () => {
    const result = await stint(["status", "--schema", test.schema]);
    expect(result.code).to.equal(ExitCode.Ok);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).to.match(/^queue\s+queued\s+due\s+running\s+retrying\s+dead\s+oldest due\s+done 5m\s+controls$/);
    expect(lines[2]).to.match(/^alpha\s+3\s+3\s+0\s+0\s+0\s+(\d+ms|\d+s)\s+\S+\s+-$/);
    expect(lines[3]).to.match(/^beta\s+0\s+0\s+2\s+0\s+1\s+-\s+\S+\s+-$/);
  });

  it("prints the same figures as JSON", async () => {
    const result = await stint(["status", "--schema", test.schema, "--json"]);
    expect(result.code).to.equal(ExitCode.Ok);
    const { schema, queues } = result.json() as StatusJson;
    expect(schema).to.equal(test.schema);
    expect(queues.map((queue) => queue.queue)).to.deep.equal(["alpha", "beta"]);
    expect(queues[1]).to.include({ queued: 0, due: 0, running: 2, retrying: 0, dead: 1, succeeded: 4, cancelled: 0, oldestDueAgeMs: null });
    expect(queues[0]!.oldestDueAgeMs).to.be.a("number").and.at.least(0);
    // Jobs succeeded in the last five minutes: 4 once the store counts them, null until then.
    expect([4, null]).to.include(queues[1]!.completedLast5m);
  });

  it("shows only the queues asked for, zeros for an empty one", async () => {
    const result = await stint(["status", "beta", "gamma", "--schema", test.schema, "--json"]);
    const { queues } = result.json() as StatusJson;
    expect(queues.map((queue) => queue.queue)).to.deep.equal(["beta", "gamma"]);
    expect(queues[1]).to.include({ queued: 0, running: 0, dead: 0 });
  });
});
