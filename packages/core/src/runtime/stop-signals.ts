import type { Logger } from "../logging/logger";
import { ExitCode } from "./exit-codes";

/**
 * Turns SIGTERM and SIGINT into a graceful stop: the first aborts the
 * returned signal (stop claiming, let running jobs finish until the
 * shutdown deadline, give the rest back); a second forces the process to
 * exit at once with code 130. Call the returned `dispose` when done.
 *
 * @example
 * ```ts
 * const stop = handleStopSignals(log);
 * const report = await runWorkers({ ...options, signal: stop.signal });
 * stop.dispose();
 * ```
 */
export function handleStopSignals(
  log: Logger,
  exit: (code: number) => void = (code) => process.exit(code),
): {
  readonly signal: AbortSignal;
  dispose(): void;
} {
  const controller = new AbortController();
  const onSignal = (name: NodeJS.Signals): void => {
    if (!controller.signal.aborted) {
      log.warn(`Received ${name}: no new jobs will be claimed; running jobs get the shutdown timeout (send it again to exit now)`);
      controller.abort(name);
      return;
    }
    log.error(`Received ${name} again: exiting now; unfinished jobs are taken over when their leases expire`);
    exit(ExitCode.Interrupted);
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  return {
    signal: controller.signal,
    dispose: () => {
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
    },
  };
}
