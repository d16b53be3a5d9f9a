#!/usr/bin/env node
// Runs the test suite (the `spec` of .mocharc.json) in lanes: mocha
// processes side by side, each on its own share of the test files, all
// against DATABASE_URL.
//
//   node scripts/with-postgres.mjs node scripts/test-lanes.mjs
//
// Most of the suite's time is spent waiting (worker processes starting and
// stopping, leases running out, a browser, npm installing), so two lanes on
// two cores take little more than half the time of one. The files of a
// package stay in one lane, in the order mocha would run them: the tests that
// share names across the server (the roles and the `stint` schema of the
// driver's tests) never run beside each other. The second lane gets a
// database of its own in the same server, created before and dropped after
// (its chaos scenarios cut the stint connections of their database, and must
// not cut the first lane's).
//
// Lanes: STINT_TEST_LANES (1 or 2); by default 2 when the server takes at
// least 200 connections (the throwaway server takes 300), else 1, since
// several worker processes per test in each lane would run a server of 100
// out of connections. Each lane's lines are printed as they come, prefixed
// with its name; the exit code is the first failing lane's, else 0.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const MIN_CONNECTIONS_FOR_TWO_LANES = 200;
/** The packages of the second lane: the tests that start processes, servers and installs. The rest go in the first. */
const SECOND_LANE_PACKAGES = new Set(["process-tests", "examples", "chaos"]);

const config = JSON.parse(readFileSync(join(ROOT, ".mocharc.json"), "utf8"));
const files = specFiles(config.spec);
const laneDatabase = (await lanesWanted()) === 2 ? await createLaneDatabase() : undefined;
const lanes =
  laneDatabase === undefined
    ? [{ name: "tests", files, databaseUrl: process.env.DATABASE_URL }]
    : [
        { name: "db", files: files.filter((file) => !SECOND_LANE_PACKAGES.has(packageOf(file))), databaseUrl: process.env.DATABASE_URL },
        { name: "processes", files: files.filter((file) => SECOND_LANE_PACKAGES.has(packageOf(file))), databaseUrl: databaseUrlFor(laneDatabase) },
      ];
console.error(`test-lanes: ${files.length} test files in ${lanes.map((lane) => `${lane.name} (${lane.files.length})`).join(" and ")}`);

const configDir = mkdtempSync(join(tmpdir(), "stint-lanes-"));
const children = [];
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => children.forEach((child) => child.kill(signal)));
const started = Date.now();
let exitCode;
try {
  const codes = await Promise.all(lanes.map((lane) => runLane(lane, lanes.length > 1)));
  for (const [index, lane] of lanes.entries()) console.error(`test-lanes: ${lane.name} exited with ${codes[index]}`);
  console.error(`test-lanes: ${((Date.now() - started) / 60_000).toFixed(1)} min`);
  exitCode = codes.find((code) => code !== 0) ?? 0;
} finally {
  rmSync(configDir, { recursive: true, force: true });
  if (laneDatabase !== undefined)
    await adminQuery(`DROP DATABASE IF EXISTS "${laneDatabase}" WITH (FORCE)`).catch((error) => console.error(`test-lanes: ${error.message}`));
}
process.exit(exitCode);

/** Runs one lane's files through mocha with the repository's settings, against its database; resolves with its exit code. */
function runLane(lane, prefixed) {
  const laneConfig = join(configDir, `${lane.name}.json`);
  writeFileSync(laneConfig, JSON.stringify({ ...config, spec: lane.files }));
  const child = spawn(process.execPath, [join(ROOT, "node_modules", "mocha", "bin", "mocha.js"), "--config", laneConfig], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: lane.databaseUrl },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const prefix = prefixed ? `[${lane.name}] ` : "";
  createInterface({ input: child.stdout }).on("line", (line) => process.stdout.write(`${prefix}${line}\n`));
  createInterface({ input: child.stderr }).on("line", (line) => process.stderr.write(`${prefix}${line}\n`));
  return new Promise((resolve) => child.on("close", (code, signal) => resolve(code ?? 128 + (signal === "SIGKILL" ? 9 : 15))));
}

/** STINT_TEST_LANES when set, else what the server's connection limit allows. */
async function lanesWanted() {
  const given = process.env.STINT_TEST_LANES;
  if (given !== undefined && given !== "") {
    if (given !== "1" && given !== "2") {
      console.error(`test-lanes: STINT_TEST_LANES must be 1 or 2, got ${JSON.stringify(given)}`);
      process.exit(64);
    }
    return Number(given);
  }
  const connections = await serverConnectionLimit();
  return connections >= MIN_CONNECTIONS_FOR_TWO_LANES ? 2 : 1;
}

async function serverConnectionLimit() {
  const { rows } = await adminQuery("SELECT current_setting('max_connections')::integer AS n");
  return rows[0].n;
}

/** The second lane's database, or undefined (one lane, then) when the server refuses to create it. */
async function createLaneDatabase() {
  const name = `stint_lane_${process.pid}`;
  try {
    await adminQuery(`CREATE DATABASE "${name}"`);
    return name;
  } catch (error) {
    console.error(`test-lanes: could not create a database for the second lane (${error.message}): one lane`);
    return undefined;
  }
}

/** DATABASE_URL with its database swapped for `database`. */
function databaseUrlFor(database) {
  const url = new URL(process.env.DATABASE_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

/** One statement on a connection of its own to DATABASE_URL. */
async function adminQuery(text) {
  if (!process.env.DATABASE_URL) {
    console.error("test-lanes: DATABASE_URL must be set (run through scripts/with-postgres.mjs)");
    process.exit(64);
  }
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

/** The files the `spec` globs name (`dir/*` and `dir/**` forms), in mocha's order: sorted by path. */
function specFiles(globs) {
  const found = new Set();
  for (const glob of globs) for (const file of expand(glob)) found.add(file);
  return [...found].sort();
}

function expand(glob) {
  const parts = glob.split("/");
  const walk = (dir, rest) => {
    if (rest.length === 0) return [dir];
    const [part, ...tail] = rest;
    if (part === "**") return [...walk(dir, tail), ...subdirectories(dir).flatMap((sub) => walk(sub, rest))];
    if (!part.includes("*")) return exists(join(dir, part)) ? walk(join(dir, part), tail) : [];
    const pattern = new RegExp(`^${part.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*")}$`);
    return entries(dir)
      .filter((name) => pattern.test(name))
      .flatMap((name) => walk(join(dir, name), tail));
  };
  return walk(ROOT, parts)
    .filter((path) => statSync(path).isFile())
    .map((path) => relative(ROOT, path));
}

function packageOf(file) {
  return file.split("/")[1];
}

function entries(dir) {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function subdirectories(dir) {
  return entries(dir)
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isDirectory());
}

function exists(path) {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}
