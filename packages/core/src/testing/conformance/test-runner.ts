import { ConfigError } from "../../errors/config-errors";

/** The default time limit of one test or hook of the suite. */
export const DEFAULT_TIMEOUT_MS = 60_000;

type Body = () => void;
type Run = () => Promise<void>;

/** The globals the suite needs of a test runner: mocha's `before`/`after`, or jest's and vitest's `beforeAll`/`afterAll`. */
interface RunnerGlobals {
  readonly describe: (name: string, body: Body) => unknown;
  readonly it: (name: string, run: (this: unknown) => Promise<void>, timeoutMs?: number) => unknown;
  readonly before?: (run: (this: unknown) => Promise<void>, timeoutMs?: number) => unknown;
  readonly after?: (run: (this: unknown) => Promise<void>, timeoutMs?: number) => unknown;
  readonly beforeAll?: (run: (this: unknown) => Promise<void>, timeoutMs?: number) => unknown;
  readonly afterAll?: (run: (this: unknown) => Promise<void>, timeoutMs?: number) => unknown;
}

function runner(): RunnerGlobals {
  const globals = globalThis as unknown as Partial<RunnerGlobals>;
  if (typeof globals.describe !== "function" || typeof globals.it !== "function") {
    throw new ConfigError("describeJobStoreConformance", "must be called where a test runner defines describe and it (mocha, jest, or vitest with globals)");
  }
  return globals as RunnerGlobals;
}

/**
 * `run` with a time limit in the runner's own way: mocha reads
 * `this.timeout(ms)` inside the function, jest and vitest the argument
 * after it (which mocha ignores).
 */
function limited(run: Run, timeoutMs: number): (this: unknown) => Promise<void> {
  return function (this: unknown) {
    (this as { timeout?: (ms: number) => void } | undefined)?.timeout?.(timeoutMs);
    return run();
  };
}

/** A group of tests (`describe`). */
export function suite(name: string, body: Body): void {
  runner().describe(name, body);
}

/** One test (`it`), allowed `timeoutMs`. */
export function testCase(name: string, run: Run, timeoutMs = DEFAULT_TIMEOUT_MS): void {
  runner().it(name, limited(run, timeoutMs), timeoutMs);
}

/** Runs once before the group's tests (`before`, or `beforeAll`). */
export function beforeTests(run: Run, timeoutMs = DEFAULT_TIMEOUT_MS): void {
  const { before, beforeAll } = runner();
  const hook = before ?? beforeAll;
  if (hook === undefined) throw new ConfigError("describeJobStoreConformance", "needs the test runner's before (mocha) or beforeAll (jest, vitest)");
  hook(limited(run, timeoutMs), timeoutMs);
}

/** Runs once after the group's tests (`after`, or `afterAll`). */
export function afterTests(run: Run, timeoutMs = DEFAULT_TIMEOUT_MS): void {
  const { after, afterAll } = runner();
  const hook = after ?? afterAll;
  if (hook === undefined) throw new ConfigError("describeJobStoreConformance", "needs the test runner's after (mocha) or afterAll (jest, vitest)");
  hook(limited(run, timeoutMs), timeoutMs);
}
