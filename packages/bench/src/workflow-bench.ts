import { JobClient, step, type WorkflowStep } from "@stint/core";
import { buildNewJob } from "@stint/core/driver";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { ProbeJob, spawnProbeWorkers, type Probe } from "@stint/process-tests";
import { sql } from "kysely";

/** Middle steps of the fan-out/fan-in (plus its first and last step). */
const WIDTH = Number(process.env["BENCH_WORKFLOW_WIDTH"] ?? 10_000);
/** Steps of the chain. */
const CHAIN = Number(process.env["BENCH_WORKFLOW_CHAIN"] ?? 100);
const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 3);
const ENQUEUE_BATCH = 10_000;

interface Drain {
  readonly jobs: number;
  readonly seconds: number;
  /** Sum of the steps' own recorded durations. */
  readonly ownSeconds: number;
}

/**
 * `node packages/bench/dist/src/workflow-bench.js`: the drain of no-op
 * probe jobs (one worker process, concurrency 10, drain mode) as plain
 * jobs, as one fan-out/fan-in workflow of the same size (a first step,
 * `BENCH_WORKFLOW_WIDTH` steps after it, a last step after all of them),
 * and a chain of `BENCH_WORKFLOW_CHAIN` steps, each waiting for the one
 * before; `BENCH_ROUNDS` rounds, in alternating order, each on a fresh
 * schema, against DATABASE_URL. Prints each round and the medians.
 */
async function main(): Promise<void> {
  const plain: Drain[] = [];
  const fanned: Drain[] = [];
  const chained: Drain[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const order = round % 2 === 0 ? [benchPlain, benchFanOut] : [benchFanOut, benchPlain];
    for (const bench of order) (bench === benchPlain ? plain : fanned).push(await withSchema(bench));
    chained.push(await withSchema(benchChain));
    console.log(
      `round ${round + 1}: plain ${rate(plain.at(-1)!)} jobs/s, fan-out/fan-in ${rate(fanned.at(-1)!)} steps/s, chain ${perStep(chained.at(-1)!)} ms/step over its own time`,
    );
  }
  const plainRate = median(plain.map((drain) => drain.jobs / drain.seconds));
  const fanRate = median(fanned.map((drain) => drain.jobs / drain.seconds));
  console.log(`\n| drain (1 process × concurrency 10), ${(WIDTH + 2).toLocaleString("en-US")} no-op jobs | median jobs/s | rounds |`);
  console.log("| --- | ---: | --- |");
  console.log(`| plain jobs | ${fmt(plainRate)} | ${plain.map(rate).join(", ")} |`);
  console.log(`| one fan-out/fan-in workflow | ${fmt(fanRate)} | ${fanned.map(rate).join(", ")} |`);
  console.log(`\nfan-out/fan-in / plain: ${(fanRate / plainRate).toFixed(2)}×`);
  console.log(
    `chain of ${CHAIN}: ${median(chained.map(overheadMs)).toFixed(2)} ms per step over the steps' own time (rounds: ${chained.map(perStep).join(", ")})`,
  );
}

function probes(count: number): Probe[] {
  return Array.from({ length: count }, (_, seq) => ({ seq }));
}

async function benchPlain(t: TestSchema): Promise<Drain> {
  const jobs = probes(WIDTH + 2).map((probe) => buildNewJob(ProbeJob, probe));
  for (let offset = 0; offset < jobs.length; offset += ENQUEUE_BATCH) await t.store.enqueueMany(jobs.slice(offset, offset + ENQUEUE_BATCH));
  return drain(t, jobs.length);
}

async function benchFanOut(t: TestSchema): Promise<Drain> {
  const middle: WorkflowStep<Probe>[] = probes(WIDTH).map((probe) => step(ProbeJob, { seq: probe.seq + 1 }, { after: ["first"] }));
  await new JobClient(t.store).enqueueWorkflow("bench-fan", {
    first: step(ProbeJob, { seq: 0 }),
    middle,
    last: step(ProbeJob, { seq: WIDTH + 1 }, { after: ["middle"] }),
  });
  return drain(t, WIDTH + 2);
}

async function benchChain(t: TestSchema): Promise<Drain> {
  const steps: Record<string, WorkflowStep<Probe>> = {};
  for (let seq = 0; seq < CHAIN; seq += 1) steps[`s${seq}`] = step(ProbeJob, { seq }, seq === 0 ? {} : { after: [`s${seq - 1}`] });
  await new JobClient(t.store).enqueueWorkflow("bench-chain", steps);
  return drain(t, CHAIN);
}

/** Runs one worker process until the queue is drained; the time from the first claim to the last completion. */
async function drain(t: TestSchema, expected: number): Promise<Drain> {
  await spawnProbeWorkers({ connectionString: t.connectionString, schema: t.schema, processes: 1, concurrency: 10 });
  const { rows } = await sql<{ seconds: number; own: number; succeeded: number }>`
    select extract(epoch from max(finished_at) - min(started_at))::float8 as seconds, coalesce(sum(duration_ms), 0)::float8 / 1000 as own,
           count(*)::int as succeeded
      from ${sql.id(t.schema, "all_jobs")} where state = 'succeeded'`.execute(t.db);
  const row = rows[0]!;
  if (row.succeeded !== expected) throw new Error(`only ${row.succeeded} of ${expected} jobs succeeded`);
  return { jobs: expected, seconds: Number(row.seconds), ownSeconds: Number(row.own) };
}

function overheadMs(drained: Drain): number {
  return ((drained.seconds - drained.ownSeconds) * 1000) / drained.jobs;
}

function rate(drained: Drain): string {
  return fmt(drained.jobs / drained.seconds);
}

function perStep(drained: Drain): string {
  return overheadMs(drained).toFixed(2);
}

function fmt(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function withSchema<R>(work: (t: TestSchema) => Promise<R>): Promise<R> {
  const t = await createTestSchema({ prefix: "stint_bench" });
  try {
    return await work(t);
  } finally {
    await t.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});
