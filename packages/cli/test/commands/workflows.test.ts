import { expect } from "chai";
import { defineJob, JobClient, step, type ClaimedJob } from "@stint/core";
import { newJob } from "@stint/core/testing";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { ExitCode } from "../../src/index";
import { stint, type ErrorJson } from "../helpers/run-stint";

const Step = defineJob<{ name: string }, { done: string }>("wf-step", { maxAttempts: 1 });

interface ShownStep {
  readonly jobId: string;
  readonly step: string;
  readonly layer: number;
  readonly state: string;
}

describe("stint workflows list, show and cancel, and workflow steps in jobs show, jobs list and status", () => {
  let test: TestSchema;
  let client: JobClient;

  beforeEach(async () => {
    test = await createTestSchema({ prefix: "stint_cli", maxConnections: 4 });
    client = new JobClient(test.store);
  });
  afterEach(() => test.drop());

  const s = (name: string, after: string[] = []) => step(Step, { name }, { after });
  const claim = () => test.store.claimBatch({ queue: Step.name, workerId: "w", limit: 100, leaseMs: 60_000 });
  const succeed = (jobs: readonly ClaimedJob[]) =>
    test.store.completeJobs({ workerId: "w", jobs: jobs.map((job) => ({ id: job.id, attempt: job.attempt, resultJson: "{}", durationMs: 5 })) });
  const die = (jobs: readonly ClaimedJob[]) =>
    test.store.markJobsDead({
      workerId: "w",
      jobs: jobs.map((job) => ({
        id: job.id,
        attempt: job.attempt,
        failure: { message: "Error: page gone\n    at fetch", code: null },
        outcome: "dead" as const,
        durationMs: 5,
      })),
    });

  /** A fan-out of 12 pages between a root and a report; the root has succeeded and two pages died. */
  async function fanOut() {
    const workflow = await client.enqueueWorkflow("crawl", {
      start: s("start"),
      pages: Array.from({ length: 12 }, (_, n) => s(`page-${n}`, ["start"])),
      report: s("report", ["pages"]),
    });
    await succeed(await claim());
    const pages = await claim();
    await succeed(pages.slice(2));
    await die(pages.slice(0, 2));
    return workflow;
  }

  it("lists workflows newest first with their states and steps, filtered by state and name", async () => {
    const crawl = await fanOut();
    const diamond = await client.enqueueWorkflow("diamond", { a: s("a"), b: s("b", ["a"]), c: s("c", ["a"]), d: s("d", ["b", "c"]) });
    const listed = await stint(["workflows", "list", "--schema", test.schema, "--json"]);
    expect(listed.code).to.equal(ExitCode.Ok);
    const workflows = (
      listed.json() as { workflows: { id: string; name: string; state: string; stepCount: number; counts: object; finishedAt: string | null }[] }
    ).workflows;
    expect(workflows.map((entry) => [entry.id, entry.name, entry.state, entry.stepCount])).to.deep.equal([
      [diamond.id, "diamond", "running", 4],
      [crawl.id, "crawl", "failed", 14],
    ]);
    expect(workflows[1]!.counts).to.deep.equal({ succeeded: 11, dead: 2, cancelled: 1 });
    expect(workflows[1]!.finishedAt).to.be.a("string");

    const text = await stint(["workflows", "list", "--schema", test.schema]);
    expect(text.stdout).to.match(/^\s*id\s+name\s+state\s+done\s+steps\s+created\s+finished$/m);
    expect(text.stdout).to.match(new RegExp(`^\\s*${crawl.id}\\s+crawl\\s+failed\\s+11/14\\s+11 succeeded, 2 dead, 1 cancelled\\s`, "m"));
    expect(text.stdout).to.match(new RegExp(`^\\s*${diamond.id}\\s+diamond\\s+running\\s+0/4\\s+3 blocked, 1 queued\\s+\\S+ \\S+\\s+-$`, "m"));

    const failed = await stint(["workflows", "list", "--state", "failed", "--schema", test.schema, "--json"]);
    expect((failed.json() as { workflows: { id: string }[] }).workflows.map((entry) => entry.id)).to.deep.equal([crawl.id]);
    const named = await stint(["workflows", "list", "--name", "diamond", "--limit", "1", "--schema", test.schema]);
    expect(named.stdout).to.contain("diamond").and.contain(`More: add --before-id ${diamond.id} for the next page.`);
    expect(named.stdout).to.not.contain("crawl");
    const firstPage = (await stint(["workflows", "list", "--limit", "1", "--schema", test.schema, "--json"])).json() as { nextBeforeId: string };
    expect(firstPage.nextBeforeId).to.equal(diamond.id);
    const nextPage = await stint(["workflows", "list", "--limit", "1", "--before-id", diamond.id, "--schema", test.schema, "--json"]);
    expect((nextPage.json() as { workflows: { id: string }[] }).workflows.map((entry) => entry.id)).to.deep.equal([crawl.id]);
    expect((await stint(["workflows", "list", "--before-id", "x1", "--schema", test.schema])).code).to.equal(ExitCode.Config);
    expect((await stint(["workflows", "list", "--state", "cancelled", "--schema", test.schema])).stdout).to.equal("No workflows match.\n");

    const bad = await stint(["workflows", "list", "--state", "blocked", "--schema", test.schema, "--json"]);
    expect(bad.code).to.equal(ExitCode.Config);
    expect((JSON.parse(bad.stderr) as ErrorJson).error.message).to.contain("--state must be one of running, succeeded, failed, cancelled");
    expect((await stint(["workflows", "list", "--limit", "0", "--schema", test.schema])).code).to.equal(ExitCode.Config);
  });

  it("shows a workflow's steps in layers, a long list of same-named steps as one row, each step with --all", async () => {
    const crawl = await fanOut();
    const shown = await stint(["workflows", "show", crawl.id, "--schema", test.schema]);
    expect(shown.code).to.equal(ExitCode.Ok);
    expect(shown.stdout)
      .to.match(/^state\s+failed$/m)
      .and.match(/^steps\s+14: 11 succeeded, 2 dead, 1 cancelled$/m);
    expect(shown.stdout).to.match(/^\s*0\s+start\s+\d+\s+wf-step\s+succeeded\s+1\s.*\s-$/m);
    expect(shown.stdout).to.match(
      /^\s*1\s+pages \(12 steps\)\s+\d+\.\.\d+\s+wf-step\s+10 succeeded, 2 dead\s+1\s.*\sstart\s+job \d+: Error: page gone… \(\+1\)$/m,
    );
    expect(shown.stdout).to.match(
      /^\s*2\s+report\s+\d+\s+wf-step\s+cancelled\s+0\s.*\spages ×12\s+cancelled: step "pages" \(job \d+\) that it waits for is dead$/m,
    );
    expect(shown.stdout).to.contain("--all shows one row per step");
    const all = await stint(["workflows", "show", crawl.id, "--all", "--schema", test.schema]);
    expect(all.stdout.split("\n").filter((line) => /^\s*1\s+pages\s+\d+\s/.test(line))).to.have.length(12);
    expect(all.stdout).to.not.contain("--all shows");

    const many = await client.enqueueWorkflow("fan", {
      split: s("split"),
      parts: Array.from({ length: 40 }, () => s("part", ["split"])),
      join: s("join", ["parts"]),
    });
    await succeed(await claim());
    const parts = await claim();
    await die(parts.slice(0, 3));
    const summary = await stint(["workflows", "show", many.id, "--schema", test.schema]);
    expect(summary.stdout).to.match(
      /^\s*1\s+parts \(40 steps\)\s+\d+\.\.\d+\s+wf-step\s+37 running, 3 dead\s+1\s.*\s+-\s+max 5ms\s+split\s+job \d+: Error: page gone… \(\+2\)$/m,
    );
    expect(summary.stdout).to.match(/^\s*2\s+join\s+\d+\s+wf-step\s+cancelled\s.*\sparts ×40\s/m);
    const json = (await stint(["workflows", "show", many.id, "--schema", test.schema, "--json"])).json() as { state: string; steps: ShownStep[] };
    expect(json.state).to.equal("running");
    expect(json.steps).to.have.length(42);
    expect(json.steps.map((entry) => entry.layer)).to.deep.equal([0, ...new Array<number>(40).fill(1), 2]);

    const missing = await stint(["workflows", "show", "999999", "--schema", test.schema]);
    expect(missing.code).to.equal(ExitCode.NotFound);
    expect(missing.stderr).to.contain("workflow 999999 not found");
    expect((await stint(["workflows", "show", "abc", "--schema", test.schema])).code).to.equal(ExitCode.Usage);
  });

  it("cancels a running workflow, refuses a finished or unknown one", async () => {
    const workflow = await client.enqueueWorkflow("diamond", { a: s("a"), b: s("b", ["a"]), c: s("c", ["a"]), d: s("d", ["b", "c"]) });
    await claim();
    const cancelled = await stint(["workflows", "cancel", workflow.id, "--schema", test.schema]);
    expect(cancelled.code).to.equal(ExitCode.Ok);
    expect(cancelled.stdout).to.equal(`Cancelled workflow ${workflow.id} (diamond): 4 steps; the workers of its running steps are told to stop them.\n`);
    expect((await test.store.getWorkflow({ id: workflow.id }))?.state).to.equal("cancelled");
    const again = await stint(["workflows", "cancel", workflow.id, "--schema", test.schema, "--json"]);
    expect(again.code).to.equal(ExitCode.WrongState);
    expect((JSON.parse(again.stderr) as ErrorJson).error).to.deep.include({ code: "STINT_WRONG_STATE" });

    const done = await client.enqueueWorkflow("one", { only: s("only") });
    await succeed(await claim());
    expect((await stint(["workflows", "cancel", done.id, "--schema", test.schema])).code).to.equal(ExitCode.WrongState);
    expect((await test.store.getWorkflow({ id: done.id }))?.state, "a refused cancel changes nothing").to.equal("succeeded");
    expect((await stint(["workflows", "cancel", "424242", "--schema", test.schema])).code).to.equal(ExitCode.NotFound);
  });

  it("shows a step's workflow in jobs show, lists blocked steps, and counts them in status", async () => {
    const workflow = await client.enqueueWorkflow("diamond", { a: s("a"), b: s("b", ["a"]), c: s("c", ["a"]), d: s("d", ["b", "c"]) });
    const d = workflow.steps.d.id;
    const shown = await stint(["jobs", "show", d, "--schema", test.schema]);
    expect(shown.stdout)
      .to.match(new RegExp(`^workflow\\s+${workflow.id} \\(stint workflows show ${workflow.id}\\)$`, "m"))
      .and.match(/^step\s+d$/m)
      .and.match(/^state\s+blocked$/m);
    expect((await stint(["jobs", "show", d, "--schema", test.schema, "--json"])).json()).to.deep.include({
      workflowId: workflow.id,
      step: "d",
      state: "blocked",
    });

    const blocked = await stint(["jobs", "list", "--state", "blocked", "--schema", test.schema, "--json"]);
    expect((blocked.json() as { jobs: { id: string }[] }).jobs.map((job) => job.id)).to.deep.equal([d, workflow.steps.c.id, workflow.steps.b.id]);

    const status = await stint(["status", "--schema", test.schema]);
    expect(status.stdout)
      .to.match(/^queue\s+blocked\s+queued\s+due\s+running/m)
      .and.match(/^wf-step\s+3\s+1\s+1\s+0\s/m);
    const json = (await stint(["status", "--schema", test.schema, "--json"])).json() as { queues: { blocked: number; queued: number }[] };
    expect(json.queues[0]).to.deep.include({ blocked: 3, queued: 1 });

    await test.store.enqueueMany([newJob("plain", {})]);
    const plain = await stint(["status", "plain", "--schema", test.schema]);
    expect(plain.stdout, "no blocked column for queues without blocked steps").to.not.contain("blocked");
  });
});
