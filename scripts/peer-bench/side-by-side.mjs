#!/usr/bin/env node
// What a setting costs: the peer benchmark's drain workloads for stint as
// it is ("off") and with some environment set ("on"), side by side. Rounds
// alternate which goes first, so drift on a shared machine hits both alike.
// The project's adapter (stint-adapter.mjs) reads STINT_BENCH_OBSERVE=1
// (metrics and event listeners on), STINT_BENCH_DURABLE_CLAIMS=1 (claims wait for their WAL flush), STINT_BENCH_BATCH=N (a batch worker,
// batchSize N), STINT_BENCH_MAX_RUNNING=N (a running cap on the queue) and
// STINT_BENCH_STORE_LOOP=1 (no worker: a bare loop over the store's claim
// and completion, the ceiling of those statements).
//
//   npm run build
//   node scripts/peer-bench/side-by-side.mjs --on STINT_BENCH_OBSERVE=1 [--rounds 5] [--workloads W3,W4] [--peer-bench ../shared/peer-bench]
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`);
  return at < 0 ? fallback : args[at + 1];
};
const rounds = Number(option("rounds", "5"));
const workloads = option("workloads", "W3,W4");
const peerBench = path.resolve(ROOT, option("peer-bench", "../shared/peer-bench"));
const onText = option("on", "STINT_BENCH_OBSERVE=1");
const onEnv = Object.fromEntries(
  onText.split(",").map((pair) => {
    const at = pair.indexOf("=");
    if (at < 1) throw new Error(`--on takes NAME=VALUE[,NAME=VALUE…], got ${JSON.stringify(pair)}`);
    return [pair.slice(0, at), pair.slice(at + 1)];
  }),
);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds must be a whole number ≥ 1, got ${option("rounds")}`);
if (!fs.existsSync(path.join(peerBench, "run.sh"))) throw new Error(`no peer benchmark at ${peerBench} (--peer-bench DIR)`);

const out = fs.mkdtempSync(path.join(os.tmpdir(), "stint-side-by-side-"));
const values = { off: {}, on: {} };

function runOnce(mode, round) {
  const prefix = path.join(out, `${mode}-${round}`);
  execFileSync(path.join(peerBench, "run.sh"), ["--adapters", "stint", "--workloads", workloads, "--reps", "1", "--out", prefix], {
    cwd: ROOT,
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, STINT_ROOT: ROOT, STINT_ADAPTER: "scripts/peer-bench/stint-adapter.mjs", ...(mode === "on" ? onEnv : {}) },
  });
  for (const record of JSON.parse(fs.readFileSync(`${prefix}.json`, "utf8")).records) {
    // W5 (latency) counts no duplicates: its value is the p50 in ms, lower is better.
    if ((record.duplicates ?? 0) !== 0) throw new Error(`${mode} ${record.workload}: ${record.duplicates} duplicates`);
    (values[mode][record.workload] ??= []).push(record.value);
  }
}

for (let round = 1; round <= rounds; round += 1) {
  const order = round % 2 === 1 ? ["off", "on"] : ["on", "off"];
  for (const mode of order) runOnce(mode, round);
  process.stderr.write(`[side-by-side] round ${round}/${rounds} done\n`);
}

const median = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
// Drain rates are whole jobs/s; W5's latencies are a few ms, so they keep two decimals.
const fmtFor = (workload) => (workload === "W5" ? (x) => x.toFixed(2) : (x) => Math.round(x).toLocaleString("en-US"));
console.log(`\nstint as it is (off) and with ${onText} (on): ${rounds} rounds, jobs/s for W3 and W4, p50 ms for W5 (median, and each round)\n`);
console.log("| workload | off | on | on / off |");
console.log("|---|---|---|---|");
for (const workload of Object.keys(values.off)) {
  const off = values.off[workload];
  const on = values.on[workload];
  const fmt = fmtFor(workload);
  console.log(
    `| ${workload} | ${fmt(median(off))} (${off.map(fmt).join(", ")}) | ${fmt(median(on))} (${on.map(fmt).join(", ")}) | ${(median(on) / median(off)).toFixed(2)}× |`,
  );
}
fs.rmSync(out, { recursive: true, force: true });
