import type { ClaimedJob } from "../job/job-record";
import type { ClaimedBatch } from "../queue/queue-controls";
import type { AttemptPipeline, AttemptPipelineParts } from "./attempt-pipeline";
import type { ClaimMode } from "./claim-durability";
import type { DrainGroupMember } from "./drain-group";
import type { HandlerSlots } from "./handler-slots";
import type { IdleWait } from "./idle-wait";
import type { PrefetchSizer } from "./prefetch-sizer";
import type { QueuePause } from "./queue-pause";
import { POLL_INTERVAL_LIMITS, type RunOptions } from "./run-options";
import type { AbandonedClaim } from "./run-shutdown";
import type { RunStop } from "./run-stop";
import type { StopReason } from "./run-summary";

/** First idle wait in loop mode; it doubles up to `pollIntervalMs`. */
const FIRST_IDLE_WAIT_MS = 50;
/** Drain mode in a drain group: the shortest time between two looks at an empty queue while another run of the group works. */
const TOGETHER_LOOK_MS = 50;
/** How long claims are retried through an outage before the run gives up. */
const CLAIM_GIVE_UP_MS = 60_000;
/** Longest time between two claims that look for jobs whose lease expired (shorter for leases under 4 s). */
const TAKE_OVER_EVERY_MS = 1_000;

/** What a {@link ClaimLoop} works with: the run's parts, built once per run. */
export interface ClaimLoopParts<T> extends Pick<AttemptPipelineParts<T>, "store" | "queue" | "workerId" | "log" | "options" | "events"> {
  readonly pipeline: AttemptPipeline<T>;
  readonly slots: HandlerSlots<T>;
  readonly pause: QueuePause;
  /** How many claimed jobs to hold ahead of the slots. */
  readonly prefetch: PrefetchSizer;
  readonly waits: IdleWait;
  readonly stop: RunStop;
  readonly runOptions: Pick<RunOptions, "maxJobs" | "mode" | "pollIntervalMs">;
  /** Drain mode: the run's place in its drain group (see `DrainGroup`). */
  readonly together?: DrainGroupMember;
}

/** How the claim loop ended: why, and a claim the stop abandoned in flight. */
export interface ClaimLoopEnd {
  readonly stoppedBecause: StopReason;
  readonly abandoned?: AbandonedClaim;
}

/** What a claim's answer tells the loop. */
type ClaimAnswer =
  /** As many jobs as asked for: claim again at once. */
  | { readonly kind: "filled" }
  | { readonly kind: "paused" }
  /** A running cap or a rate limit held the claim back and took nothing. */
  | { readonly kind: "held"; readonly retryAfterMs: number | null }
  /** Fewer jobs than asked for, but some. */
  | { readonly kind: "short"; readonly recordedBefore: number }
  /** No due job; an outcome recorded since the claim was sent (`recordedBefore`: the slots' count then) may have made one due already. */
  | { readonly kind: "empty"; readonly recordedBefore: number };

/** A claim's answer, or why none came. */
type ClaimResult =
  | ClaimAnswer
  /** The run's time was up before the claim could be sent. */
  | { readonly kind: "out-of-time" }
  /** The run was told to stop while the claim was retried or in flight. */
  | { readonly kind: "stopped" };

/**
 * The claim loop of one run. Each turn, it either waits for room (the
 * slots are busy and the buffer still holds more than half the prefetch)
 * or claims up to the room left, buffers what it got, and acts on the
 * answer: claim again, wait for an outcome recorded or a wake-up (a slot
 * freeing up alone finds nothing new), wait out a hold, or, with no due job
 * left, end the run (drain mode) or idle with a backoff up to
 * `pollIntervalMs` (loop mode). It ends when the run is told to stop, a
 * budget is spent or the queue is drained.
 *
 * @example
 * ```ts
 * const { stoppedBecause, abandoned } = await new ClaimLoop(parts).run();
 * ```
 */
export class ClaimLoop<T> {
  readonly #parts: ClaimLoopParts<T>;
  readonly #mode: "drain" | "loop";
  readonly #pollIntervalMs: number;
  /** How often a claim also takes over jobs whose lease expired: a quarter of the lease, at most a second. */
  readonly #takeOverEveryMs: number;
  /** When a claim last took over expired leases. */
  #tookOverAt = -Infinity;
  /** Loop mode: the next idle wait (doubling up to the poll interval), and the recorded count when the queue was last announced drained. */
  readonly #idle = { waitMs: FIRST_IDLE_WAIT_MS, drainedAt: undefined as number | undefined };
  #abandoned: AbandonedClaim | undefined;

  constructor(parts: ClaimLoopParts<T>) {
    this.#parts = parts;
    const { mode = "drain", pollIntervalMs = POLL_INTERVAL_LIMITS.default } = parts.runOptions;
    this.#mode = mode;
    this.#pollIntervalMs = pollIntervalMs;
    this.#takeOverEveryMs = Math.min(TAKE_OVER_EVERY_MS, Math.floor(parts.options.leaseMs / 4));
  }

  /** Claims until the run stops; rejects when a claim fails for good. */
  async run(): Promise<ClaimLoopEnd> {
    try {
      const stoppedBecause = await this.#loop();
      return this.#abandoned === undefined ? { stoppedBecause } : { stoppedBecause, abandoned: this.#abandoned };
    } finally {
      this.#parts.waits.cancelTimer();
    }
  }

  async #loop(): Promise<StopReason> {
    const { stop, slots, pause, waits } = this.#parts;
    for (;;) {
      if (stop.signal.aborted) return stop.reason;
      const room = this.#room();
      if (room === "budget-spent") return "max-jobs";
      if (room === "none") {
        // No claim goes out now, so a pause would not be seen until one does: look at the controls on a wake-up.
        if (pause.wokenSinceLastLook && slots.buffered > 0) await pause.readControls();
        await waits.untilNudged();
        continue;
      }
      const mode = this.#parts.pipeline.leases.nextClaim();
      if (mode === "hold") {
        // A write unanswered for too long: a claim now could commit jobs whose outcomes never commit.
        await this.#parts.pipeline.leases.untilHoldMayEnd(stop.signal);
        continue;
      }
      const answer = await this.#claim(room, mode);
      if (answer.kind === "out-of-time") return "max-runtime";
      if (answer.kind === "stopped") return stop.reason;
      const ended = await this.#actOn(answer);
      if (ended !== undefined) return ended;
    }
  }

  /**
   * How many jobs to claim now. Claims go out once the buffer is down to
   * half the prefetch: the slots never wait for a round trip, and a claim
   * takes at least half the prefetch at a time.
   */
  #room(): number | "none" | "budget-spent" {
    const { slots, prefetch } = this.#parts;
    const { maxJobs } = this.#parts.runOptions;
    const budget = maxJobs === undefined ? Infinity : maxJobs - slots.claimedSoFar;
    if (budget <= 0 && slots.buffered === 0) return "budget-spent";
    const ahead = prefetch.target();
    const room = Math.min(slots.capacity + ahead - slots.running - slots.buffered, budget);
    // With batches, the buffer fills at least one whole batch before claims pause.
    return room <= 0 || slots.buffered > Math.max(Math.floor(ahead / 2), slots.batchSize - 1) ? "none" : room;
  }

  /**
   * Claims up to `limit` jobs (retried through an outage; a retry waits for
   * its flush), buffers them and starts what the slots allow.
   */
  async #claim(limit: number, firstMode: Exclude<ClaimMode, "hold">): Promise<ClaimResult> {
    const { store, options, workerId, queue, log, pipeline, slots, pause, waits, stop } = this.#parts;
    pause.claiming();
    // A process resumed after a pause stops its lapsed handlers before it takes more work.
    pipeline.leases.expireLapsed();
    let sentAt = options.clock.now();
    const recordedBefore = slots.recorded;
    const { deadline } = stop;
    if (deadline !== undefined && deadline - sentAt <= 0) return { kind: "out-of-time" };
    const takeOverExpired = this.#takeOverDue(sentAt);
    let sent: Promise<readonly ClaimedJob[]> | undefined;
    let mode = firstMode;
    const jobs = await pipeline.policy.run(
      () => {
        // Each try counts the lease (and the run's remaining time) from when it is sent: a claim retried
        // through an outage must not hold the jobs it finally takes against the first try's clock.
        sentAt = options.clock.now();
        this.#parts.together?.claimSent();
        if (sent !== undefined) mode = "durable";
        const maxTimeoutMs = deadline === undefined ? undefined : Math.max(0, deadline - sentAt);
        return (sent = store.claimBatch({
          queue,
          workerId,
          limit,
          leaseMs: options.leaseMs,
          takeOverExpired,
          durable: mode === "durable",
          ...(maxTimeoutMs === undefined ? {} : { maxTimeoutMs }),
        }));
      },
      { giveUpAfterMs: CLAIM_GIVE_UP_MS, signal: stop.signal, onRetry: (message) => log.warn(`Claim failed, retrying: ${message}`, { queue, workerId }) },
    );
    if (jobs === undefined) {
      if (sent !== undefined) this.#abandoned = { jobs: sent, sentAt };
      return { kind: "stopped" };
    }
    slots.claimed(jobs, sentAt, pipeline.leases.claimed(mode, jobs.length));
    if (jobs.length > 0) this.#parts.together?.claimedJobs();
    pipeline.leases.expireLapsed();
    slots.startBuffered();
    waits.cancelTimer();
    return answerOf(jobs, limit, recordedBefore);
  }

  /** Expired leases are looked for every so often, not on every claim: the look costs the store a scan. */
  #takeOverDue(now: number): boolean {
    if (now - this.#tookOverAt < this.#takeOverEveryMs) return false;
    this.#tookOverAt = now;
    return true;
  }

  /** Waits as the answer says; the reason the run ends, when it does. */
  async #actOn(answer: ClaimAnswer): Promise<StopReason | undefined> {
    const { pause, slots, waits } = this.#parts;
    if (answer.kind === "paused") {
      await pause.claimFoundPaused();
      if (this.#mode === "drain" && slots.unrecorded === 0) return "drained";
      await waits.idle(this.#pollIntervalMs);
      return undefined;
    }
    pause.claimFoundOpen();
    if (answer.kind === "empty") return this.#nothingDue(answer.recordedBefore);
    // The queue had work: the next idle wait starts short again.
    this.#idle.waitMs = FIRST_IDLE_WAIT_MS;
    if (answer.kind === "held") {
      // Ask again when the cap or the limit may give more, or when a slot frees up.
      await waits.idle(Math.min(answer.retryAfterMs ?? this.#pollIntervalMs, this.#pollIntervalMs));
    } else if (answer.kind === "short") {
      // The queue had fewer due jobs than there was room for: wait for something that may make one due before asking again.
      await this.#untilMoreMayBeDue(answer.recordedBefore);
    }
    return undefined;
  }

  /** A claim found no due job: look again, wait for the attempts in flight, end the run (drain mode) or idle (loop mode). */
  async #nothingDue(recordedBefore: number): Promise<StopReason | undefined> {
    const { slots, waits, events } = this.#parts;
    // An outcome written while this claim ran may have made a job due (a retry, a workflow step's dependents, a serial
    // line's next job, a cap's room): look again before concluding. (Read with `unrecorded` below in one go: an
    // attempt leaves the slots and is counted as recorded at the same time.)
    if (slots.recorded !== recordedBefore) return undefined;
    // An attempt whose outcome is still being written may make one due too.
    if (slots.unrecorded > 0 || slots.buffered > 0) {
      await this.#untilMoreMayBeDue(recordedBefore);
      return undefined;
    }
    if (this.#mode === "drain") {
      const { together, options, stop } = this.#parts;
      const verdict = together?.foundEmpty() ?? "drained";
      if (verdict === "drained") {
        events.queueDrained();
        return "drained";
      }
      // Another run of the drain group is at work, and an outcome it records (or recorded while this claim ran) may
      // make a job of this queue due: look again after one, at most every TOGETHER_LOOK_MS, so a busy neighbour does
      // not turn into a stream of empty claims.
      if (verdict === "wait") await waits.untilNudged();
      await options.clock.sleep(TOGETHER_LOOK_MS, stop.signal);
      return undefined;
    }
    // Once per idle spell: the first empty claim after something was recorded (or after the start).
    if (this.#idle.drainedAt !== slots.recorded) events.queueDrained();
    this.#idle.drainedAt = slots.recorded;
    await waits.idle(this.#idle.waitMs);
    this.#idle.waitMs = Math.min(this.#idle.waitMs * 2, this.#pollIntervalMs);
    return undefined;
  }

  /**
   * After a claim that found fewer due jobs than it had room for: waits for
   * something that may have made a job due since it was sent. An outcome
   * recorded may have (a retry due at once, a workflow step's dependents, a
   * running cap's room), and so may a wake-up from outside; a handler slot
   * freeing up alone does not: its outcome is not written yet, and a claim
   * sent now would come back empty while it is. The wait also ends when the
   * run is told to stop, or when no outcome is left to record.
   */
  async #untilMoreMayBeDue(recordedBefore: number): Promise<void> {
    const { slots, waits, pause, stop } = this.#parts;
    do await waits.untilNudged();
    while (slots.recorded === recordedBefore && slots.unrecorded > 0 && !pause.wokenSinceLastLook && !stop.signal.aborted);
  }
}

/** What the claim's answer says, checked in this order. */
function answerOf(jobs: ClaimedBatch, asked: number, recordedBefore: number): ClaimAnswer {
  if (jobs.length === asked) return { kind: "filled" };
  const { hold } = jobs;
  if (hold?.paused === true) return { kind: "paused" };
  if (hold !== undefined && jobs.length === 0) return { kind: "held", retryAfterMs: hold.retryAfterMs };
  if (jobs.length > 0) return { kind: "short", recordedBefore };
  return { kind: "empty", recordedBefore };
}
