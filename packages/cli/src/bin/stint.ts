#!/usr/bin/env node
import "reflect-metadata";
import { ExitCode } from "@stint/core";
import { runCli } from "../cli";

// The first SIGINT/SIGTERM asks the command to stop (a `run` shuts its
// workers down gracefully); a second one exits at once.
const interrupt = new AbortController();
const onSignal = (signal: NodeJS.Signals): void => {
  if (!interrupt.signal.aborted) {
    process.stderr.write(`stint: ${signal} received, stopping (send it again to exit at once)\n`);
    interrupt.abort();
    return;
  }
  process.stderr.write(`stint: second ${signal}, exiting now\n`);
  process.exit(ExitCode.Interrupted);
};
process.on("SIGINT", onSignal);
process.on("SIGTERM", onSignal);
// `stint jobs list | head`: a reader that went away is not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(process.exitCode ?? ExitCode.Ok);
  throw error;
});

void runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env, signal: interrupt.signal }).then((code) => {
  process.exitCode = code;
  // Connections are closed by now; an app that leaves a handle open must not keep the process alive.
  setTimeout(() => process.exit(), 5_000).unref();
});
