import assert from "node:assert/strict";
import { PayloadError } from "../../errors/config-errors";
import { MAX_JOB_LOG_BYTES, MAX_JOB_LOG_LINES, MAX_META_BYTES } from "../../limits";
import { suite, testCase } from "./test-runner";
import { claimAndAbandon, claimOne, newJob, rejectionOf, type ConformanceContext } from "./conformance-harness";

/** One log line's JSON text, as `serializeLogLine` writes it. */
function line(message: string, fields?: object): string {
  return JSON.stringify({ at: "2026-01-02T03:04:05.006Z", message, ...(fields === undefined ? {} : { fields }) });
}

/** Lines `from`…`to - 1`, named `line <n>`. */
function numbered(from: number, to: number): string[] {
  return Array.from({ length: to - from }, (_, n) => line(`line ${from + n}`));
}

/** updateJobMeta, appendJobLog and listJobLogs: a running attempt's writes to its own job. */
export function describeJobWritesConformance<Tx>(ctx: ConformanceContext<Tx>): void {
  suite("handler writes to its job", () => {
    testCase("merges the owner's meta patch, refuses a stale attempt's, and the next attempt reads the merge", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { metaJson: '{"tenant":"acme","step":"new"}' }));
      const stale = await claimAndAbandon(ctx.harness(), queue, "w1");
      const current = await claimOne(ctx.store(), queue, "w2");
      assert.equal(await ctx.store().updateJobMeta({ workerId: "w2", job: current, patchJson: '{"step":"uploaded","files":3}' }), true);
      assert.equal(await ctx.store().updateJobMeta({ workerId: "w1", job: stale, patchJson: '{"step":"stale"}' }), false);
      assert.equal(await ctx.store().updateJobMeta({ workerId: "w2", job: stale, patchJson: '{"step":"stale"}' }), false);
      assert.equal(await ctx.store().updateJobMeta({ workerId: "w1", job: current, patchJson: '{"step":"other worker"}' }), false);
      assert.deepStrictEqual((await ctx.store().getJob({ id }))!.meta, { tenant: "acme", step: "uploaded", files: 3 });

      await ctx.store().scheduleRetries({ workerId: "w2", jobs: [{ ...current, delayMs: 0, failure: { message: "boom", code: null }, spendAttempt: true }] });
      assert.equal(await ctx.store().updateJobMeta({ workerId: "w2", job: current, patchJson: '{"step":"after"}' }), false);
      const next = await claimOne(ctx.store(), queue, "w3");
      assert.deepStrictEqual(next.meta, { tenant: "acme", step: "uploaded", files: 3 });
    });

    testCase("refuses a patch whose merge is over MAX_META_BYTES with a PayloadError naming the size, changing nothing", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { metaJson: JSON.stringify({ big: "x".repeat(MAX_META_BYTES - 100) }) }));
      const job = await claimOne(ctx.store(), queue, "w");
      const error = await rejectionOf(ctx.store().updateJobMeta({ workerId: "w", job, patchJson: JSON.stringify({ more: "y".repeat(200) }) }));
      assert.ok(error instanceof PayloadError, String(error));
      assert.match(error.message, /meta would be \d+ bytes/);
      assert.ok((error.sizeBytes ?? 0) > MAX_META_BYTES);
      assert.deepStrictEqual(Object.keys((await ctx.store().getJob({ id }))!.meta), ["big"]);
      assert.equal(await ctx.store().updateJobMeta({ workerId: "w", job, patchJson: '{"big":"small"}' }), true);
      assert.deepStrictEqual((await ctx.store().getJob({ id }))!.meta, { big: "small" });
    });

    testCase("keeps the owner's log lines per attempt and refuses a stale attempt's", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}));
      assert.deepStrictEqual(await ctx.store().listJobLogs({ jobId: id }), []);
      const stale = await claimAndAbandon(ctx.harness(), queue, "w1");
      const current = await claimOne(ctx.store(), queue, "w2");
      assert.equal(await ctx.store().appendJobLog({ workerId: "w2", job: current, linesJson: [line("started", { rows: 3 })], droppedLines: 0 }), true);
      assert.equal(await ctx.store().appendJobLog({ workerId: "w2", job: current, linesJson: [line("halfway"), line("done")], droppedLines: 0 }), true);
      assert.equal(await ctx.store().appendJobLog({ workerId: "w1", job: stale, linesJson: [line("stale")], droppedLines: 0 }), false);
      assert.equal(await ctx.store().appendJobLog({ workerId: "w2", job: stale, linesJson: [line("stale")], droppedLines: 0 }), false);
      await ctx.store().scheduleRetries({ workerId: "w2", jobs: [{ ...current, delayMs: 0, failure: { message: "boom", code: null }, spendAttempt: true }] });
      assert.equal(await ctx.store().appendJobLog({ workerId: "w2", job: current, linesJson: [line("late")], droppedLines: 0 }), false);
      const third = await claimOne(ctx.store(), queue, "w3");
      assert.equal(await ctx.store().appendJobLog({ workerId: "w3", job: third, linesJson: [line("again")], droppedLines: 2 }), true);

      const logs = await ctx.store().listJobLogs({ jobId: id });
      assert.deepStrictEqual(
        logs.map((log) => [log.jobId, log.attempt, log.droppedLines, log.lines.map((l) => l.message)]),
        [
          [id, current.attempt, 0, ["started", "halfway", "done"]],
          [id, third.attempt, 2, ["again"]],
        ],
      );
      assert.deepStrictEqual(logs[0]!.lines[0], { at: new Date("2026-01-02T03:04:05.006Z"), message: "started", fields: { rows: 3 } });
      assert.equal(logs[0]!.lines[1]!.fields, null);
      assert.deepStrictEqual(await ctx.store().listJobLogs({ jobId: "999999999999" }), []);
    });

    testCase("keeps an attempt's newest MAX_JOB_LOG_LINES lines and counts the ones it drops", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}));
      const job = await claimOne(ctx.store(), queue, "w");
      for (const [from, to] of [
        [0, 60],
        [60, 120],
        [120, 180],
      ] as const) {
        assert.equal(await ctx.store().appendJobLog({ workerId: "w", job, linesJson: numbered(from, to), droppedLines: from === 120 ? 5 : 0 }), true);
      }
      const [log] = await ctx.store().listJobLogs({ jobId: id });
      assert.equal(log!.lines.length, MAX_JOB_LOG_LINES);
      assert.equal(log!.lines[0]!.message, `line ${180 - MAX_JOB_LOG_LINES}`);
      assert.equal(log!.lines.at(-1)!.message, "line 179");
      assert.equal(log!.droppedLines, 180 - MAX_JOB_LOG_LINES + 5);
    });

    testCase("keeps an attempt's log within MAX_JOB_LOG_BYTES, dropping the oldest lines", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}));
      const job = await claimOne(ctx.store(), queue, "w");
      const long = (n: number): string => line(`${n} ${"é".repeat(1_000)}`);
      for (let batch = 0; batch < 4; batch += 1) {
        const lines = Array.from({ length: 10 }, (_, n) => long(batch * 10 + n));
        assert.equal(await ctx.store().appendJobLog({ workerId: "w", job, linesJson: lines, droppedLines: 0 }), true);
      }
      const [log] = await ctx.store().listJobLogs({ jobId: id });
      const kept = log!.lines.length;
      assert.ok(kept > 5 && kept < 40, `kept ${kept} lines`);
      assert.ok(kept * 2_000 <= MAX_JOB_LOG_BYTES, `kept ${kept} lines of over 2,000 bytes`);
      assert.equal(log!.droppedLines, 40 - kept);
      assert.ok(log!.lines.at(-1)!.message.startsWith("39 "));
    });

    testCase("deletes a job's log with the job when retention removes it, and only its", async () => {
      const queue = ctx.freshQueue();
      const [pruned, kept] = await ctx.store().enqueueMany([newJob(queue, {}, { priority: 1 }), newJob(queue, {})]);
      const job = await claimOne(ctx.store(), queue, "w");
      const running = await claimOne(ctx.store(), queue, "w");
      for (const held of [job, running]) {
        await ctx.store().appendJobLog({ workerId: "w", job: held, linesJson: [line("kept until the job goes")], droppedLines: 0 });
      }
      await ctx.store().completeJobs({ workerId: "w", jobs: [{ ...job, resultJson: null, durationMs: 1 }] });
      assert.equal((await ctx.store().listJobLogs({ jobId: pruned!.id })).length, 1);
      const done = await ctx.store().getJob({ id: pruned!.id });
      await ctx.harness().waitUntilPast(new Date(done!.finishedAt!.getTime() + 1));
      assert.equal(await ctx.store().deleteFinishedBefore({ states: ["succeeded"], olderThanMs: 0, limit: 100, queues: [queue] }), 1);
      assert.deepStrictEqual(await ctx.store().listJobLogs({ jobId: pruned!.id }), []);
      assert.equal((await ctx.store().listJobLogs({ jobId: kept!.id })).length, 1);
    });
  });
}
