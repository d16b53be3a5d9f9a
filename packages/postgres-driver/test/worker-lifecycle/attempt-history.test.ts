import { expect } from "chai";
import type { JobContext } from "@stint/core";
import { buildNewJob, MAX_ERROR_MESSAGE, MAX_ERROR_TEXT } from "@stint/core/driver";
import { ScriptedWorker, TaskJob, schemaPerTest } from "./scripted-worker";

describe("attempt history, meta and progress through a real worker", () => {
  const scene = schemaPerTest();
  const enqueueWithOneAttempt = async (): Promise<string> => (await scene.schema().store.enqueue(buildNewJob(TaskJob, { n: 1 }, { maxAttempts: 1 }))).id;

  it("keeps three records of a job that fails twice and then succeeds, agreeing with the job row", async () => {
    const id = await scene.enqueue(1);
    let calls = 0;
    const worker = new ScriptedWorker(scene.schema().store, {
      process: async () => {
        calls += 1;
        if (calls < 3) throw Object.assign(new Error(`upstream answered 503 (call ${calls})`), { status: 503 });
        return { ok: true };
      },
    });
    const summary = await worker.start();
    expect(summary).to.include({ succeeded: 1, retried: 2 });

    const store = scene.schema().store;
    const attempts = await store.listAttempts({ jobId: id });
    const job = await store.getJob({ id });
    expect(attempts.map((a) => [a.attempt, a.outcome])).to.deep.equal([
      [1, "failed"],
      [2, "failed"],
      [3, "succeeded"],
    ]);
    expect(new Set(attempts.map((a) => a.workerId))).to.deep.equal(new Set([job!.lockedBy]));
    expect(attempts[0]!.error).to.include({ message: "Error: upstream answered 503 (call 1)", code: "STINT_UNKNOWN" });
    expect(attempts[0]!.error!.stack).to.match(/^Error: upstream answered 503 \(call 1\)\n\s+at /);
    for (const attempt of attempts) expect(attempt.durationMs).to.be.a("number").and.at.least(0);
    expect(job).to.include({ state: "succeeded", attempts: 3, durationMs: attempts[2]!.durationMs });
    expect(attempts[2]!.finishedAt!.getTime()).to.equal(job!.finishedAt!.getTime());
  });

  it("records the worker's measured duration of a failed attempt", async () => {
    const id = await enqueueWithOneAttempt();
    await new ScriptedWorker(scene.schema().store, {
      process: async () => {
        await new Promise((resolve) => setTimeout(resolve, 60));
        throw new Error("slow and wrong");
      },
    }).start();
    const [attempt] = await scene.schema().store.listAttempts({ jobId: id });
    expect(attempt).to.include({ outcome: "dead" });
    expect(attempt!.durationMs).to.be.at.least(55);
  });

  it("stores an error's message and stack cut to the documented sizes", async () => {
    const id = await enqueueWithOneAttempt();
    await new ScriptedWorker(scene.schema().store, {
      process: async () => {
        throw new Error(`huge \u0000 ${"x".repeat(20_000)}`);
      },
    }).start();
    const [attempt] = await scene.schema().store.listAttempts({ jobId: id });
    expect(attempt!.error!.message).to.have.length(MAX_ERROR_MESSAGE);
    expect(attempt!.error!.message).to.match(/^Error: huge \\u0000 x+…$/);
    expect(attempt!.error!.stack!.length).to.be.at.most(MAX_ERROR_TEXT);
    expect(attempt!.error!.stack).to.match(/… \(truncated\)$/);
  });

  it("hands meta to the handler and stores the handler's last progress before the outcome", async () => {
    const store = scene.schema().store;
    const { id } = await store.enqueue(buildNewJob(TaskJob, { n: 1 }, { meta: { tenant: "acme", traceparent: "00-0af7-b7ad-01" } }));
    const seen: JobContext["meta"][] = [];
    await new ScriptedWorker(store, {
      process: async (_item, ctx) => {
        seen.push(ctx.meta);
        for (let done = 1; done <= 50; done += 1) ctx.progress({ done, of: 50 });
        return null;
      },
    }).start();
    expect(seen).to.deep.equal([{ tenant: "acme", traceparent: "00-0af7-b7ad-01" }]);
    expect(Object.isFrozen(seen[0])).to.equal(true);
    const job = await store.getJob({ id });
    expect(job!.progress).to.deep.equal({ done: 50, of: 50 });
    expect(job!.meta).to.deep.equal({ tenant: "acme", traceparent: "00-0af7-b7ad-01" });
  });

  it("refuses a progress value that is not JSON in the handler, failing the attempt with PayloadError", async () => {
    const id = await enqueueWithOneAttempt();
    await new ScriptedWorker(scene.schema().store, {
      process: async (_item, ctx) => {
        ctx.progress(Number.NaN);
        return null;
      },
    }).start();
    const [attempt] = await scene.schema().store.listAttempts({ jobId: id });
    expect(attempt).to.include({ outcome: "dead" });
    expect(attempt!.error!.code).to.equal("STINT_PAYLOAD");
  });
});
