import { expect } from "chai";
import fc from "fast-check";
import { ClaimFlushes } from "../../src/worker/claim-flushes";

describe("ClaimFlushes", () => {
  it("counts a claim that waited for its flush as flushed, and an unflushed one only after a later write changed a row", async () => {
    const flushes = new ClaimFlushes();
    expect(flushes.isFlushed(flushes.claimed(true))).to.equal(true);
    const first = flushes.claimed(false);
    expect(flushes.isFlushed(first)).to.equal(false);
    await flushes.confirming(() => Promise.resolve([] as string[]));
    expect(flushes.isFlushed(first)).to.equal(false);
    await flushes.confirming(() => Promise.resolve(["812"]));
    expect(flushes.isFlushed(first)).to.equal(true);
  });

  it("does not let a write sent before a claim answered prove that claim flushed", async () => {
    const flushes = new ClaimFlushes();
    let answer: (ids: string[]) => void = () => undefined;
    const write = flushes.confirming(() => new Promise<string[]>((resolve) => (answer = resolve)));
    const later = flushes.claimed(false);
    answer(["812"]);
    await write;
    expect(flushes.isFlushed(later)).to.equal(false);
  });

  it("holds a claim flushed exactly when a write marked at or after it changed a row (any order of claims and writes)", () => {
    type Step = { readonly kind: "claim"; readonly durable: boolean } | { readonly kind: "write"; readonly changed: boolean; readonly delay: number };
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({ kind: fc.constant("claim" as const), durable: fc.boolean() }),
      fc.record({ kind: fc.constant("write" as const), changed: fc.boolean(), delay: fc.nat(5) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        const flushes = new ClaimFlushes();
        const claims: { readonly number: number; readonly durable: boolean; readonly at: number }[] = [];
        const writes: { readonly mark: number; readonly changed: boolean; readonly commitAt: number }[] = [];
        const committed = new Set<number>();
        steps.forEach((entry, at) => {
          // Writes commit `delay` steps after they were sent.
          for (const [index, write] of writes.entries()) {
            if (!committed.has(index) && write.commitAt <= at) {
              committed.add(index);
              if (write.changed) flushes.flushed(write.mark);
            }
          }
          if (entry.kind === "claim") claims.push({ number: flushes.claimed(entry.durable), durable: entry.durable, at });
          else writes.push({ mark: flushes.mark(), changed: entry.changed, commitAt: at + entry.delay });
        });
        for (const claim of claims) {
          const provedBy = writes.some((write, index) => committed.has(index) && write.changed && write.mark >= claim.number);
          expect(flushes.isFlushed(claim.number)).to.equal(claim.durable || provedBy);
        }
      }),
    );
  });
});
