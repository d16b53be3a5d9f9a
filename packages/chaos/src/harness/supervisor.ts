import { join } from "node:path";
import type { ChaosProcessSettings } from "../worker/worker-process";
import { ChildNode, type ChildExit } from "./child-process";

/** Options of a {@link Supervisor}. */
export interface SupervisorOptions {
  /** Where its workers connect (every stint connection of theirs). */
  readonly connectionString: string;
  /** Where their oracle writes go; default `connectionString`. */
  readonly oracleConnectionString?: string;
  readonly schema: string;
  /** Worker processes kept running at once. */
  readonly processes: number;
  readonly settings: ChaosProcessSettings;
  /** Start a new process in a slot whose process exited (killed, crashed or, in once mode, drained). Default true. */
  readonly restart?: boolean;
  /** Wait before a restart. Default 100 ms. */
  readonly restartDelayMs?: number;
}

/** One worker process and what it said about itself. */
export interface WorkerProcess {
  readonly node: ChildNode;
  readonly slot: number;
  /** Its process identity (`host:pid:token`), known once it printed its ready line. */
  identity: string | undefined;
  /** Its worker id: the owner written in `locked_by`. */
  readonly workerId: () => string | undefined;
  /** Set when the harness signalled it, so its exit is not counted as unexpected. */
  signalledBy: NodeJS.Signals | undefined;
}

const WORKER_SCRIPT = join(__dirname, "..", "worker", "worker-process.js");

/**
 * Keeps `processes` chaos worker processes running, like a Deployment's
 * ReplicaSet or a CronJob firing back to back: a process that exits is
 * replaced after `restartDelayMs`. Counts every start and every exit the
 * harness did not cause.
 */
export class Supervisor {
  readonly #options: SupervisorOptions;
  readonly #slots: (WorkerProcess | undefined)[];
  readonly #all: WorkerProcess[] = [];
  readonly #pendingRestarts = new Set<Promise<void>>();
  #stopping = false;
  /** Processes started after the first ones. */
  restarts = 0;
  /** Exits the harness did not cause (crashes, self-kills, and in once mode drained runs). */
  readonly unexpectedExits: ChildExit[] = [];

  constructor(options: SupervisorOptions) {
    this.#options = options;
    this.#slots = new Array<WorkerProcess | undefined>(options.processes).fill(undefined);
  }

  /** Starts every slot's process and waits until each printed its ready line. */
  async start(timeoutMs = 30_000): Promise<void> {
    const started = this.#slots.map((_, slot) => this.#launch(slot));
    await Promise.all(started.map((worker) => worker.node.event("ready", timeoutMs)));
  }

  /** The process currently in each slot that is still alive. */
  get live(): readonly WorkerProcess[] {
    return this.#slots.filter((worker): worker is WorkerProcess => worker?.node.alive === true);
  }

  /** Every process ever started, in order. */
  get all(): readonly WorkerProcess[] {
    return this.#all;
  }

  /** A live process that is ready (has printed its identity) and has run for at least `minAgeMs`, chosen at random. */
  pick(random: () => number, minAgeMs = 0): WorkerProcess | undefined {
    const now = Date.now();
    const candidates = this.live.filter((worker) => worker.identity !== undefined && now - worker.node.startedAt >= minAgeMs);
    return candidates.length === 0 ? undefined : candidates[Math.floor(random() * candidates.length)];
  }

  /** Sends `signal` to `worker` and waits until it has been reaped. */
  async kill(worker: WorkerProcess, signal: NodeJS.Signals): Promise<ChildExit> {
    worker.signalledBy = signal;
    worker.node.kill(signal);
    return worker.node.exited;
  }

  /**
   * Stops restarting, sends SIGTERM to every live process and waits for them;
   * one still running after `timeoutMs` gets SIGKILL. Resolves with each exit.
   */
  async stop(timeoutMs = 20_000): Promise<readonly { readonly worker: WorkerProcess; readonly exit: ChildExit }[]> {
    this.#stopping = true;
    await Promise.all(this.#pendingRestarts);
    const live = this.live;
    for (const worker of live) {
      worker.signalledBy = "SIGTERM";
      worker.node.kill("SIGTERM");
    }
    const timer = setTimeout(() => {
      for (const worker of live) worker.node.kill("SIGKILL");
    }, timeoutMs);
    try {
      return await Promise.all(live.map(async (worker) => ({ worker, exit: await worker.node.exited })));
    } finally {
      clearTimeout(timer);
    }
  }

  /** How many warning and error log lines all its processes wrote so far (what the faults made them say). */
  complaints(): number {
    return this.warnings().length;
  }

  /** The warning and error log lines its processes wrote so far, each process's in order. */
  warnings(): string[] {
    return this.#all.flatMap((worker) => worker.node.logLines.filter((line) => /"level":"(?:warn|error)"/.test(line)));
  }

  /** Kills every process left at once (cleanup after a failure). */
  async abort(): Promise<void> {
    this.#stopping = true;
    for (const worker of this.#all) worker.node.kill("SIGKILL");
    await Promise.all(this.#all.map((worker) => worker.node.exited));
  }

  #launch(slot: number): WorkerProcess {
    const node = new ChildNode(WORKER_SCRIPT, {
      DATABASE_URL: this.#options.connectionString,
      ...(this.#options.oracleConnectionString === undefined ? {} : { CHAOS_ORACLE_URL: this.#options.oracleConnectionString }),
      STINT_SCHEMA: this.#options.schema,
      CHAOS_WORKER: JSON.stringify(this.#options.settings),
    });
    const worker: WorkerProcess = {
      node,
      slot,
      identity: undefined,
      // A chaos process runs one worker: its id is the process identity's token (`host:pid:token`).
      workerId: () => (worker.identity === undefined ? undefined : worker.identity.slice(worker.identity.lastIndexOf(":") + 1)),
      signalledBy: undefined,
    };
    this.#slots[slot] = worker;
    this.#all.push(worker);
    node.event("ready", 60_000).then(
      (event) => {
        worker.identity = String(event["identity"]);
      },
      () => undefined,
    );
    void node.exited.then((exit) => {
      if (worker.signalledBy === undefined) this.unexpectedExits.push(exit);
      if (this.#stopping || this.#options.restart === false || this.#slots[slot] !== worker) return;
      const restart = new Promise<void>((resolve) => setTimeout(resolve, this.#options.restartDelayMs ?? 100)).then(() => {
        this.#pendingRestarts.delete(restart);
        if (this.#stopping) return;
        this.restarts += 1;
        this.#launch(slot);
      });
      this.#pendingRestarts.add(restart);
    });
    return worker;
  }
}
