import type { JobAttempt } from "../store/job-store";

/**
 * The leases a {@link LeaseKeeper} holds, found by job id and attempt. Keyed
 * by the job's id alone (the claimed job's own string, whose hash the engine
 * keeps), so holding, finding and releasing a lease builds no key string:
 * a batch worker does each of them for thousands of jobs a second. A job
 * has one lease in the common case; two only while a newer attempt of it
 * (or the same attempt, claimed again after a crash undid its claim) is
 * held before the older one is released.
 *
 * @example
 * ```ts
 * const table = new LeaseTable<HeldLease>();
 * table.add(lease);
 * table.find({ id: "812", attempt: 2 }); // the lease, or undefined
 * table.delete(lease);
 * ```
 */
export class LeaseTable<L extends JobAttempt> {
  readonly #byId = new Map<string, L | L[]>();
  #size = 0;

  /** How many leases are held. */
  get size(): number {
    return this.#size;
  }

  /** Holds `lease`; one held for the same attempt of the same job is replaced. */
  add(lease: L): void {
    const current = this.#byId.get(lease.id);
    if (current === undefined) {
      this.#byId.set(lease.id, lease);
      this.#size += 1;
    } else if (Array.isArray(current)) {
      const same = current.findIndex((held) => held.attempt === lease.attempt);
      if (same >= 0) current[same] = lease;
      else {
        current.push(lease);
        this.#size += 1;
      }
    } else if (current.attempt === lease.attempt) {
      this.#byId.set(lease.id, lease);
    } else {
      this.#byId.set(lease.id, [current, lease]);
      this.#size += 1;
    }
  }

  /** The lease held for this attempt of this job. */
  find(job: JobAttempt): L | undefined {
    const current = this.#byId.get(job.id);
    if (current === undefined) return undefined;
    if (!Array.isArray(current)) return current.attempt === job.attempt ? current : undefined;
    return current.find((held) => held.attempt === job.attempt);
  }

  /** Stops holding `lease` (nothing happens when another lease holds its place). */
  delete(lease: L): void {
    const current = this.#byId.get(lease.id);
    if (current === lease) {
      this.#byId.delete(lease.id);
      this.#size -= 1;
    } else if (Array.isArray(current)) {
      const at = current.indexOf(lease);
      if (at < 0) return;
      current.splice(at, 1);
      this.#size -= 1;
      if (current.length === 1) this.#byId.set(lease.id, current[0]!);
    }
  }

  /** Every lease held now, as a new array (safe to change the table while walking it). */
  values(): L[] {
    const all: L[] = [];
    for (const held of this.#byId.values()) {
      if (Array.isArray(held)) all.push(...held);
      else all.push(held);
    }
    return all;
  }
}
