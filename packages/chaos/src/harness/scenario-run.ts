import type { ChaosProcessSettings } from "../worker/worker-process";
import { createChaosDatabase, type ChaosDatabase } from "./chaos-database";
import type { ChildExit } from "./child-process";
import { checkInvariants, idleInTransaction, type InvariantReport } from "./invariants";
import { openJobs, runningOwnedBy, sleep } from "./jobs";
import { Supervisor, type WorkerProcess } from "./supervisor";

/** Runs `work` with a fresh chaos schema at `connectionString`, dropped afterwards whatever happens. */
export async function withChaosDatabase<R>(connectionString: string, work: (database: ChaosDatabase) => Promise<R>): Promise<R> {
  const database = await createChaosDatabase(connectionString);
  try {
    return await work(database);
  } finally {
    await database.drop().catch(() => undefined);
  }
}

/**
 * Runs `work` with a started {@link Supervisor} of chaos workers on
 * `database`; whatever happens, every process it started is gone afterwards.
 */
export async function withSupervisor<R>(
  database: ChaosDatabase,
  options: { readonly processes: number; readonly settings: ChaosProcessSettings; readonly restart?: boolean; readonly restartDelayMs?: number },
  work: (supervisor: Supervisor) => Promise<R>,
): Promise<R> {
  const supervisor = new Supervisor({ connectionString: database.connectionString, schema: database.schema, ...options });
  try {
    await supervisor.start();
    return await work(supervisor);
  } finally {
    await supervisor.abort();
  }
}

/**
 * Polls until every job is terminal or `timeoutMs` passes, calling `inject`
 * every `tickMs` meanwhile. Errors of the poll itself (a restarting
 * server) are retried. Resolves with whether the queue drained.
 */
export async function drainWithFaults(
  database: ChaosDatabase,
  options: { readonly timeoutMs: number; readonly tickMs: number; readonly inject?: () => Promise<void> },
): Promise<boolean> {
  const deadline = Date.now() + options.timeoutMs;
  while (Date.now() < deadline) {
    const open = await openJobs(database).catch(() => -1);
    if (open === 0) return true;
    if (options.inject !== undefined) await options.inject();
    await sleep(options.tickMs);
  }
  return (await openJobs(database).catch(() => -1)) === 0;
}

/**
 * SIGKILLs a random worker process (one that has been up for a moment) on
 * each `tick`, up to `target` kills, and counts the jobs the victim held
 * when it died: its rows still `running` under its name once it is gone.
 */
export class KillInjector {
  readonly #database: ChaosDatabase;
  readonly #supervisor: Supervisor;
  readonly #random: () => number;
  readonly #target: number;
  kills = 0;
  /** Jobs running under the victims' names right after they died. */
  inFlightAtKills = 0;
  readonly #startedAt = Date.now();
  /** Ms from the injector's creation to the last kill. */
  lastKillAfterMs = 0;

  constructor(database: ChaosDatabase, supervisor: Supervisor, random: () => number, target: number) {
    this.#database = database;
    this.#supervisor = supervisor;
    this.#random = random;
    this.#target = target;
  }

  async tick(): Promise<void> {
    if (this.kills >= this.#target) return;
    const victim = this.#supervisor.pick(this.#random, 500);
    if (victim === undefined) return;
    await this.kill(victim);
  }

  async kill(victim: WorkerProcess): Promise<void> {
    await this.#supervisor.kill(victim, "SIGKILL");
    this.kills += 1;
    this.lastKillAfterMs = Date.now() - this.#startedAt;
    // Statements the victim had sent still finish on the server; give them a moment.
    await sleep(50);
    this.inFlightAtKills += await runningOwnedBy(this.#database, victim.workerId()!);
  }
}

/** What {@link settle} found once the workers stopped. */
export interface SettledRun {
  readonly invariants: InvariantReport;
  /** stint backends idle in transaction while the workers were alive and idle. */
  readonly idleInTransaction: readonly string[];
  /** How each process still running at the end exited after SIGTERM. */
  readonly exits: readonly ChildExit[];
}

/**
 * Ends a run: looks for stint backends idle in transaction while the
 * workers still live, stops them with SIGTERM, then checks the invariants.
 */
export async function settle(database: ChaosDatabase, supervisor: Supervisor, expectedJobs: number): Promise<SettledRun> {
  const idle = await idleInTransaction(database.db);
  const stopped = await supervisor.stop();
  const invariants = await checkInvariants(database, expectedJobs);
  return { invariants, idleInTransaction: idle, exits: stopped.map(({ exit }) => exit) };
}
