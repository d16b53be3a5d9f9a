/**
 * A small deterministic random number generator (mulberry32): the same
 * 32-bit seed gives the same numbers in [0, 1) every time. Pass it as a
 * worker's `random` option to make jitter repeatable in tests, or use it
 * wherever a run must be replayable from its seed.
 *
 * @example
 * ```ts
 * const random = seededRandom(42);
 * random(); // 0.6011037519201636, every time
 * ```
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
