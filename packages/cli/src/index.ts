// Public API of @stint/cli: the command line as a function, for embedding and tests.
export { runCli } from "./cli";
export { ExitCode } from "@stint/core";
export { CliErrorCode } from "./cli-error";
export type { CliIo, OutputStream } from "./io";
export type { AppEnvironment, CreateApp, StintApp } from "./app/load-app";
