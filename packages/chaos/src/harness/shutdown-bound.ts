/**
 * The longest a stopping worker waits for the writes that give its jobs
 * back, after its shutdown timeout: `GIVE_BACK_MS` in the worker run,
 * bounded further by the lease.
 */
export const GIVE_BACK_MS = 5_000;

/**
 * How long after SIGTERM a worker process may take to exit: its shutdown
 * timeout, then the give-back bound (`min(GIVE_BACK_MS, leaseMs)`), then
 * `slackMs` for closing its connections and exiting on a loaded machine.
 */
export function shutdownExitBound(settings: { readonly shutdownTimeoutMs: number; readonly leaseMs: number }, slackMs: number): number {
  return settings.shutdownTimeoutMs + Math.min(GIVE_BACK_MS, settings.leaseMs) + slackMs;
}
