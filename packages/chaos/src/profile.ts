/** How big each scenario runs: `full` for `npm run chaos`, `short` for CI (`npm test`). */
export interface ChaosProfile {
  readonly name: "full" | "short";
  /** 1. kill -9 of worker processes while handlers make effects through `ctx.once`. */
  readonly workerKills: {
    readonly jobs: number;
    readonly processes: number;
    readonly concurrency: number;
    readonly kills: number;
    readonly killEveryMs: number;
    readonly handlerMs: number;
    readonly leaseMs: number;
  };
  /** 2. pg_terminate_backend on stint connections every second. */
  readonly connectionKills: {
    readonly jobs: number;
    readonly processes: number;
    readonly concurrency: number;
    readonly perSecond: number;
    readonly handlerMs: number;
  };
  /** 3. The server restarted, fast and immediate. */
  readonly serverRestarts: { readonly jobs: number; readonly processes: number; readonly concurrency: number; readonly handlerMs: number };
  /** 4. Handlers running `leases` × leaseMs. */
  readonly longHandler: { readonly jobs: number; readonly leaseMs: number; readonly leases: number };
  /** 5. A handler blocking the event loop past its lease. */
  readonly eventLoopBlock: { readonly jobs: number; readonly leaseMs: number };
  /** 6. SIGTERM with long jobs in flight. */
  readonly gracefulShutdown: { readonly processes: number; readonly concurrency: number; readonly shutdownTimeoutMs: number };
  /** 7. A job whose handler kills its own process. */
  readonly poisonJob: { readonly jobs: number; readonly processes: number; readonly concurrency: number; readonly maxAttempts: number };
  /** 8. Malformed payloads among valid ones. */
  readonly malformedPayloads: { readonly jobs: number; readonly malformed: number };
  /** 9. Producers racing on the same dedupe keys. */
  readonly concurrentDedupe: { readonly processes: number; readonly keys: number };
  /** 10. Transactional enqueue, committed, rolled back or cut off. */
  readonly transactionalEnqueue: { readonly transactions: number; readonly producers: number; readonly holdMs: number };
  /** 11. Transactional completion under kill -9. */
  readonly transactionalCompletion: {
    readonly jobs: number;
    readonly processes: number;
    readonly concurrency: number;
    readonly kills: number;
    readonly killEveryMs: number;
    readonly handlerMs: number;
  };
  /** 12. Retry timing and dead at exactly maxAttempts. */
  readonly retryTiming: { readonly jobs: number; readonly maxAttempts: number; readonly baseMs: number; readonly maxMs: number };
  /**
   * 13. A worker's connections black-holed for 3 × leaseMs while it runs
   * `jobs` long handlers; after the cut heals it runs `healedJobs` alone;
   * then, cut again with `stopJobs` in flight, one SIGTERM.
   */
  readonly blackHole: {
    readonly jobs: number;
    readonly healedJobs: number;
    readonly stopJobs: number;
    readonly leaseMs: number;
    readonly shutdownTimeoutMs: number;
  };
  /** 14. A lone worker SIGSTOPped for 2 × leaseMs with a job in flight, `trials` times. */
  readonly lonePause: { readonly trials: number; readonly leaseMs: number };
  /** 15. SIGTERM to a worker whose `concurrency` slots run long jobs and whose `prefetch` buffer is full. */
  readonly fullBufferShutdown: { readonly concurrency: number; readonly prefetch: number; readonly leaseMs: number; readonly shutdownTimeoutMs: number };
  /** 16. The synchronous standby stopped for `leases` × leaseMs under running workers. */
  readonly standbyDown: {
    readonly jobs: number;
    readonly processes: number;
    readonly concurrency: number;
    readonly handlerMs: number;
    readonly leaseMs: number;
    readonly leases: number;
  };
  /** 17. kill -9 on a queue of `groups` capped groups and `lines` serial lines. */
  readonly groupKills: {
    readonly groups: number;
    readonly perGroup: number;
    readonly lines: number;
    readonly perLine: number;
    readonly maxRunningPerGroup: number;
    readonly processes: number;
    readonly concurrency: number;
    readonly kills: number;
    readonly killEveryMs: number;
    readonly handlerMs: number;
    readonly leaseMs: number;
  };
  /** 18. kill -9 while `processes` workers run a 1,000-step workflow whose steps make effects through `ctx.once`. */
  readonly workflowKills: Omit<ChaosProfile["workerKills"], "jobs">;
}

/** The full suite: the figures the issue asks for (10,000 jobs and 30 kills in scenario 1, 16 producers × 1,000 keys, …). */
export const FULL_PROFILE: ChaosProfile = Object.freeze({
  name: "full",
  workerKills: { jobs: 10_000, processes: 4, concurrency: 8, kills: 32, killEveryMs: 350, handlerMs: 40, leaseMs: 5_000 },
  connectionKills: { jobs: 4_000, processes: 3, concurrency: 8, perSecond: 4, handlerMs: 60 },
  serverRestarts: { jobs: 3_000, processes: 2, concurrency: 8, handlerMs: 40 },
  longHandler: { jobs: 6, leaseMs: 1_000, leases: 10 },
  eventLoopBlock: { jobs: 4, leaseMs: 1_000 },
  gracefulShutdown: { processes: 2, concurrency: 4, shutdownTimeoutMs: 1_000 },
  poisonJob: { jobs: 400, processes: 2, concurrency: 4, maxAttempts: 3 },
  malformedPayloads: { jobs: 1_000, malformed: 100 },
  concurrentDedupe: { processes: 16, keys: 1_000 },
  transactionalEnqueue: { transactions: 1_000, producers: 8, holdMs: 60 },
  transactionalCompletion: { jobs: 2_000, processes: 3, concurrency: 8, kills: 10, killEveryMs: 400, handlerMs: 30 },
  retryTiming: { jobs: 200, maxAttempts: 4, baseMs: 100, maxMs: 400 },
  blackHole: { jobs: 8, healedJobs: 8, stopJobs: 4, leaseMs: 1_500, shutdownTimeoutMs: 1_000 },
  lonePause: { trials: 20, leaseMs: 1_000 },
  fullBufferShutdown: { concurrency: 4, prefetch: 16, leaseMs: 4_000, shutdownTimeoutMs: 1_000 },
  standbyDown: { jobs: 4_000, processes: 3, concurrency: 8, handlerMs: 20, leaseMs: 2_000, leases: 5 },
  groupKills: {
    groups: 20,
    perGroup: 100,
    lines: 20,
    perLine: 50,
    maxRunningPerGroup: 2,
    processes: 4,
    concurrency: 8,
    kills: 16,
    killEveryMs: 400,
    handlerMs: 20,
    leaseMs: 1_500,
  },
  workflowKills: { processes: 3, concurrency: 6, kills: 10, killEveryMs: 400, handlerMs: 60, leaseMs: 1_500 },
});

/** The CI suite: the same scenarios and checks with fewer jobs, kills and processes. */
export const SHORT_PROFILE: ChaosProfile = Object.freeze({
  name: "short",
  workerKills: { jobs: 2_000, processes: 3, concurrency: 6, kills: 8, killEveryMs: 350, handlerMs: 40, leaseMs: 4_000 },
  connectionKills: { jobs: 1_000, processes: 2, concurrency: 8, perSecond: 3, handlerMs: 50 },
  serverRestarts: { jobs: 800, processes: 2, concurrency: 8, handlerMs: 30 },
  longHandler: { jobs: 4, leaseMs: 1_500, leases: 5 },
  // As longHandler's: a 600 ms lease left its heartbeats 200 ms apart, too little on a loaded CI machine.
  eventLoopBlock: { jobs: 2, leaseMs: 1_500 },
  gracefulShutdown: { processes: 2, concurrency: 3, shutdownTimeoutMs: 1_000 },
  poisonJob: { jobs: 100, processes: 2, concurrency: 4, maxAttempts: 3 },
  malformedPayloads: { jobs: 300, malformed: 30 },
  concurrentDedupe: { processes: 8, keys: 300 },
  transactionalEnqueue: { transactions: 200, producers: 4, holdMs: 40 },
  transactionalCompletion: { jobs: 500, processes: 2, concurrency: 6, kills: 4, killEveryMs: 400, handlerMs: 30 },
  retryTiming: { jobs: 40, maxAttempts: 3, baseMs: 100, maxMs: 400 },
  blackHole: { jobs: 4, healedJobs: 4, stopJobs: 2, leaseMs: 1_000, shutdownTimeoutMs: 1_000 },
  lonePause: { trials: 6, leaseMs: 1_000 },
  fullBufferShutdown: { concurrency: 2, prefetch: 8, leaseMs: 4_000, shutdownTimeoutMs: 1_000 },
  standbyDown: { jobs: 1_500, processes: 2, concurrency: 4, handlerMs: 20, leaseMs: 2_000, leases: 3 },
  groupKills: {
    groups: 10,
    perGroup: 60,
    lines: 10,
    perLine: 30,
    maxRunningPerGroup: 2,
    processes: 3,
    concurrency: 6,
    kills: 6,
    killEveryMs: 400,
    handlerMs: 20,
    leaseMs: 1_500,
  },
  workflowKills: { processes: 3, concurrency: 4, kills: 6, killEveryMs: 400, handlerMs: 60, leaseMs: 1_500 },
});

/** The profile named by `CHAOS_PROFILE` (`full` unless it says `short`). */
export function profileFromEnv(env: NodeJS.ProcessEnv = process.env): ChaosProfile {
  const name = env["CHAOS_PROFILE"] ?? "full";
  if (name !== "full" && name !== "short") throw new Error(`CHAOS_PROFILE must be "full" or "short", got ${JSON.stringify(name)}`);
  return name === "short" ? SHORT_PROFILE : FULL_PROFILE;
}
