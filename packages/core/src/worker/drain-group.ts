/**
 * Drain-mode runs that end together. A run of the group that finds its
 * queue empty does not end while another run of the group is still at
 * work: an outcome that run records may make a job of this queue due (a
 * workflow step it released, a dead-letter copy, the next job of a serial
 * line), so the idle run looks at its queue again after each one (at most
 * every 50 ms). The runs end once every one of them has found its queue
 * empty with no outcome recorded since. A run that stops for another
 * reason (a budget, its signal) leaves the group once its outcomes are
 * recorded.
 *
 * `runWorkers` in once mode (`stint run --once`) puts the workers of the
 * run in one group, so a workflow whose steps cross queues finishes in one
 * run. A run of a single queue needs none: it looks again after its own
 * outcomes anyway.
 *
 * @example
 * ```ts
 * const together = new DrainGroup();
 * const [invoices, reports] = await Promise.all([
 *   invoiceWorker.start({ drainGroup: together }),
 *   reportWorker.start({ drainGroup: together }),
 * ]);
 * ```
 */
export class DrainGroup {
  /** Outcomes recorded by the group's runs so far. */
  #recorded = 0;
  readonly #members = new Set<Member>();

  /**
   * Adds a run to the group; `wake` is called when the run should look at
   * its queue again (the claim loop calls the member's methods).
   */
  join(wake: () => void): DrainGroupMember {
    const member: Member = { wake, idleAt: undefined, claimSentAt: 0 };
    this.#members.add(member);
    return {
      recorded: () => {
        this.#recorded += 1;
        for (const other of this.#members) if (other.idleAt !== undefined && other !== member) other.wake();
      },
      claimedJobs: () => {
        member.idleAt = undefined;
      },
      claimSent: () => {
        member.claimSentAt = this.#recorded;
      },
      foundEmpty: () => {
        // The claim's snapshot may predate outcomes recorded while it ran: it vouches for the count when it was sent.
        member.idleAt = member.claimSentAt;
        if (member.idleAt !== this.#recorded) return "look-again";
        for (const other of this.#members) if (other.idleAt !== this.#recorded) return "wait";
        // The others find the same when they look again: wake them now rather than at the next outcome.
        for (const other of this.#members) if (other !== member) other.wake();
        return "drained";
      },
      leave: () => {
        this.#members.delete(member);
        for (const other of this.#members) other.wake();
      },
    };
  }
}

interface Member {
  readonly wake: () => void;
  /** The group's count of outcomes when the claim that last found the run's queue empty was sent; `undefined` while it has work. */
  idleAt: number | undefined;
  /** The group's count of outcomes when the run's last claim was sent. */
  claimSentAt: number;
}

/** What a run of a {@link DrainGroup} does after its queue was found empty. */
export type DrainVerdict = "drained" | "wait" | "look-again";

/** One run's place in a {@link DrainGroup}. */
export interface DrainGroupMember {
  /** The run recorded an outcome: the group's idle runs look again. */
  recorded(): void;
  /** A claim of the run is sent (each try of it): an empty answer vouches for the group's outcomes recorded so far. */
  claimSent(): void;
  /** A claim of the run took jobs: it is at work again. */
  claimedJobs(): void;
  /**
   * The run's last claim found its queue empty, with nothing of its own in
   * flight. `"drained"` when every run of the group has, by claims sent
   * after the last outcome: the drain ends. `"look-again"` when an outcome
   * was recorded while the claim ran (its snapshot may predate a job that
   * outcome made due); `"wait"` to wait to be woken by the next outcome.
   */
  foundEmpty(): DrainVerdict;
  /** The run ended, its outcomes recorded: the others no longer wait for it. */
  leave(): void;
}
