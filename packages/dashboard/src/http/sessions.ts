import { createHash, randomBytes } from "node:crypto";
import type { Clock } from "@stint/core";

/** How long sessions last; see `createDashboard`'s `sessionMaxAgeMs` and `sessionIdleMs`. */
export interface SessionLimits {
  /** A session ends this long after sign-in, used or not. */
  readonly maxAgeMs: number;
  /** A session ends when no page was asked for this long. */
  readonly idleMs: number;
  /** Most sessions kept at once; past it, the oldest ends. */
  readonly maxSessions: number;
}

/** Twelve hours from sign-in, two hours without a request, 10,000 at once. */
export const DEFAULT_SESSION_LIMITS: SessionLimits = Object.freeze({ maxAgeMs: 12 * 3_600_000, idleMs: 2 * 3_600_000, maxSessions: 10_000 });

interface Session {
  readonly endsAt: number;
  lastSeen: number;
}

/**
 * The sessions of token viewers who signed in on the sign-in page, kept in
 * this process's memory: each sign-in gets its own random id (256 bits),
 * which ends at sign-out, `maxAgeMs` after sign-in, or after `idleMs`
 * without a request. Only a digest of each id is kept, so the table
 * holds nothing a viewer could present. Several replicas of one
 * dashboard do not share sessions: route a browser to one replica
 * (sticky sessions), or sign in on each.
 *
 * @example
 * ```ts
 * const sessions = new SessionStore(DEFAULT_SESSION_LIMITS, systemClock);
 * const id = sessions.open();
 * sessions.isOpen(id); // true
 * sessions.close(id);
 * sessions.isOpen(id); // false
 * ```
 */
export class SessionStore {
  readonly #limits: SessionLimits;
  readonly #clock: Pick<Clock, "now">;
  /** By digest of the id, oldest first (a Map keeps insertion order). */
  readonly #sessions = new Map<string, Session>();

  constructor(limits: SessionLimits, clock: Pick<Clock, "now">) {
    this.#limits = limits;
    this.#clock = clock;
  }

  /** Seconds a new session lasts at most: the cookie's `Max-Age`. */
  get maxAgeSeconds(): number {
    return Math.floor(this.#limits.maxAgeMs / 1_000);
  }

  /** How many sessions are open (ended ones may count until the next sign-in sweeps them). */
  get size(): number {
    return this.#sessions.size;
  }

  /** Opens a session and returns its id, the value of the session cookie. */
  open(): string {
    const now = this.#clock.now();
    if (this.#sessions.size >= this.#limits.maxSessions) this.#sweep(now);
    while (this.#sessions.size >= this.#limits.maxSessions) this.#sessions.delete(this.#sessions.keys().next().value!);
    const id = randomBytes(32).toString("base64url");
    this.#sessions.set(digest(id), { endsAt: now + this.#limits.maxAgeMs, lastSeen: now });
    return id;
  }

  /** True when `id` is an open session; counts as a request for the idle timeout. */
  isOpen(id: string | undefined): boolean {
    if (id === undefined || !/^[A-Za-z0-9_-]{43}$/.test(id)) return false;
    const key = digest(id);
    const session = this.#sessions.get(key);
    if (session === undefined) return false;
    const now = this.#clock.now();
    if (now >= session.endsAt || now - session.lastSeen >= this.#limits.idleMs) {
      this.#sessions.delete(key);
      return false;
    }
    session.lastSeen = now;
    return true;
  }

  /** Ends the session `id` (sign-out); nothing for an unknown id. */
  close(id: string | undefined): void {
    if (id !== undefined) this.#sessions.delete(digest(id));
  }

  #sweep(now: number): void {
    for (const [key, session] of this.#sessions) {
      if (now >= session.endsAt || now - session.lastSeen >= this.#limits.idleMs) this.#sessions.delete(key);
    }
  }
}

function digest(id: string): string {
  return createHash("sha256").update(id).digest("base64url");
}
