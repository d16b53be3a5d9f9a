import { expect } from "chai";
import fc from "fast-check";
import { ClaimDurability } from "../../src/worker/claim-durability";

const LIMIT_MS = 500;
const LEASE_MS = 3_000;
const ids = (answer: readonly string[]): number => answer.length;
const outage = (error: unknown): boolean => error instanceof Error && error.message === "outage";

/** A write whose answer the test gives when it likes. */
function pendingWrite(): { readonly write: () => Promise<string[]>; answer(ids: string[]): void; fail(error: Error): void } {
  let answer: (ids: string[]) => void = () => undefined;
  let fail: (error: Error) => void = () => undefined;
  const promise = new Promise<string[]>((resolve, reject) => {
    answer = resolve;
    fail = reject;
  });
  return { write: () => promise, answer: (changed) => answer(changed), fail: (error) => fail(error) };
}

describe("ClaimDurability", () => {
  describe("which claims are on disk", () => {
    it("counts a claim that waited for its flush as flushed, and an unflushed one only after a later write changed a row", async () => {
      const durability = new ClaimDurability({ alwaysDurable: false, holdAfterMs: LIMIT_MS, holdAtMostMs: LEASE_MS });
      expect(durability.isFlushed(durability.claimed(true, 3))).to.equal(true);
      const first = durability.claimed(false, 3);
      expect(durability.isFlushed(first)).to.equal(false);
      await durability.confirm(() => Promise.resolve([] as string[]), 0, ids, outage);
      expect(durability.isFlushed(first)).to.equal(false);
      await durability.confirm(() => Promise.resolve(["812"]), 0, ids, outage);
      expect(durability.isFlushed(first)).to.equal(true);
    });

    it("does not let a write sent before a claim answered prove that claim flushed", async () => {
      const durability = new ClaimDurability({ alwaysDurable: false, holdAfterMs: LIMIT_MS, holdAtMostMs: LEASE_MS });
      const pending = pendingWrite();
      const write = durability.confirm(pending.write, 0, ids, outage);
      const later = durability.claimed(false, 1);
      pending.answer(["812"]);
      await write;
      expect(durability.isFlushed(later)).to.equal(false);
    });

    it("holds a claim flushed exactly when a write sent after it changed a row or a later durable claim took jobs (any order)", async () => {
      type Step = { readonly kind: "claim"; readonly durable: boolean } | { readonly kind: "write"; readonly changed: boolean; readonly delay: number };
      const step: fc.Arbitrary<Step> = fc.oneof(
        fc.record({ kind: fc.constant("claim" as const), durable: fc.boolean() }),
        fc.record({ kind: fc.constant("write" as const), changed: fc.boolean(), delay: fc.nat(5) }),
      );
      await fc.assert(
        fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
          const durability = new ClaimDurability({ alwaysDurable: false, holdAfterMs: LIMIT_MS, holdAtMostMs: LEASE_MS });
          const claims: { readonly number: number; readonly durable: boolean; readonly at: number }[] = [];
          const writes: {
            readonly pending: ReturnType<typeof pendingWrite>;
            readonly sentAt: number;
            readonly changed: boolean;
            readonly commitAt: number;
            answered: boolean;
          }[] = [];
          for (const [at, entry] of [...steps, ...Array.from({ length: 6 }, () => undefined)].entries()) {
            // Writes commit `delay` steps after they were sent.
            for (const write of writes) {
              if (!write.answered && write.commitAt <= at) {
                write.pending.answer(write.changed ? ["1"] : []);
                write.answered = true;
              }
            }
            await new Promise((resolve) => setImmediate(resolve));
            if (entry?.kind === "claim") claims.push({ number: durability.claimed(entry.durable, 1), durable: entry.durable, at });
            else if (entry?.kind === "write") {
              const pending = pendingWrite();
              void durability.confirm(pending.write, at, ids, outage);
              writes.push({ pending, sentAt: at, changed: entry.changed, commitAt: at + entry.delay, answered: false });
            }
          }
          for (const claim of claims) {
            const provedByWrite = writes.some((write) => write.changed && write.sentAt > claim.at);
            const provedByClaim = claims.some((other) => other.durable && other.at > claim.at);
            expect(durability.isFlushed(claim.number)).to.equal(claim.durable || provedByWrite || provedByClaim);
          }
        }),
      );
    });

    it("numbers a claim that took nothing as on disk", () => {
      const durability = new ClaimDurability({ alwaysDurable: false, holdAfterMs: LIMIT_MS, holdAtMostMs: LEASE_MS });
      expect(durability.isFlushed(durability.claimed(false, 0))).to.equal(true);
    });
  });

  describe("how the next claim may go out", () => {
    it("goes out fast by default and durable when asked for", () => {
      expect(new ClaimDurability({ alwaysDurable: false, holdAfterMs: LIMIT_MS, holdAtMostMs: LEASE_MS }).nextClaim(0)).to.equal("fast");
      expect(new ClaimDurability({ alwaysDurable: true, holdAfterMs: LIMIT_MS, holdAtMostMs: LEASE_MS }).nextClaim(0)).to.equal("durable");
    });

    it("holds while a write has gone unanswered for the limit, and goes out again once it answers", async () => {
      const durability = new ClaimDurability({ alwaysDurable: false, holdAfterMs: LIMIT_MS, holdAtMostMs: LEASE_MS });
      const pending = pendingWrite();
      const write = durability.confirm(pending.write, 1_000, ids, outage);
      expect(durability.nextClaim(1_000 + LIMIT_MS - 1)).to.equal("fast");
      expect(durability.nextClaim(1_000 + LIMIT_MS)).to.equal("hold");
      expect(durability.holdEndsIn(1_000 + LIMIT_MS)).to.equal(LEASE_MS - LIMIT_MS);
      expect(durability.nextClaim(1_000 + LEASE_MS - 1)).to.equal("hold");
      pending.answer([]);
      await write;
      expect(durability.nextClaim(1_000 + LEASE_MS - 1)).to.equal("fast");
      expect(durability.holdEndsIn(1_000 + LEASE_MS - 1)).to.equal(Infinity);
    });

    it("after a whole lease of a write unanswered, waits for flushes instead of holding (a write stuck on a lock must not stop the worker)", () => {
      const durability = new ClaimDurability({ alwaysDurable: false, holdAfterMs: LIMIT_MS, holdAtMostMs: LEASE_MS });
      void durability.confirm(pendingWrite().write, 0, ids, outage);
      expect(durability.nextClaim(LEASE_MS)).to.equal("durable");
      void durability.confirm(pendingWrite().write, LEASE_MS, ids, outage);
      expect(durability.nextClaim(LEASE_MS + LIMIT_MS), "a younger write still unanswered holds").to.equal("hold");
    });

    it("after a write failed for the connection's sake, waits for flushes until a write answers", async () => {
      const durability = new ClaimDurability({ alwaysDurable: false, holdAfterMs: LIMIT_MS, holdAtMostMs: LEASE_MS });
      const failed = durability.confirm(() => Promise.reject(new Error("outage")), 0, ids, outage);
      await failed.catch(() => undefined);
      expect(durability.nextClaim(1)).to.equal("durable");
      await durability.confirm(() => Promise.resolve([] as string[]), 2, ids, outage);
      expect(durability.nextClaim(3)).to.equal("fast");
    });

    it("after a write failed, goes out fast again once a durable claim took jobs", async () => {
      const durability = new ClaimDurability({ alwaysDurable: false, holdAfterMs: LIMIT_MS, holdAtMostMs: LEASE_MS });
      await durability.confirm(() => Promise.reject(new Error("outage")), 0, ids, outage).catch(() => undefined);
      durability.claimed(true, 0);
      expect(durability.nextClaim(1), "a claim that took nothing wrote nothing").to.equal("durable");
      durability.claimed(true, 2);
      expect(durability.nextClaim(1)).to.equal("fast");
    });

    it("is not moved by a write the store refused (an answer, not an outage)", async () => {
      const durability = new ClaimDurability({ alwaysDurable: false, holdAfterMs: LIMIT_MS, holdAtMostMs: LEASE_MS });
      await durability.confirm(() => Promise.reject(new Error("constraint")), 0, ids, outage).catch(() => undefined);
      expect(durability.nextClaim(1)).to.equal("fast");
    });

    it("waits for flushes once the connection was lost", () => {
      const durability = new ClaimDurability({ alwaysDurable: false, holdAfterMs: LIMIT_MS, holdAtMostMs: LEASE_MS });
      durability.connectionLost();
      expect(durability.nextClaim(0)).to.equal("durable");
    });
  });
});
