import { expect } from "chai";
import fc from "fast-check";
import { seededRandom } from "../../src/time/seeded-random";

describe("seededRandom", () => {
  it("repeats its numbers for a seed", () => {
    const first = seededRandom(42);
    const second = seededRandom(42);
    const a = Array.from({ length: 5 }, () => first());
    expect(Array.from({ length: 5 }, () => second())).to.deep.equal(a);
    expect(a[0]).to.equal(0.6011037519201636);
  });

  it("stays in [0, 1) for every seed", () => {
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        const random = seededRandom(seed);
        for (let i = 0; i < 20; i += 1) {
          const value = random();
          expect(value).to.be.at.least(0).and.below(1);
        }
      }),
    );
  });
});
