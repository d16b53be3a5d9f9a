/**
 * A periodic duty of the elected maintenance process. Every service has the
 * same shape: one bounded pass per `runOnce()`, safe to run from any
 * process (the database arbitrates), so once mode can call it directly.
 */
export interface MaintenanceService {
  /** Short stable name used in logs, e.g. `lease-rescue`. */
  readonly name: string;
  /** How often the maintenance loop runs it, in ms. */
  readonly everyMs: number;
  /** One bounded pass; resolves with what it did, for the log. */
  runOnce(): Promise<string>;
}
