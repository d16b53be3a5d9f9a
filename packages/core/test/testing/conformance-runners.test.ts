import { expect } from "chai";
import { describeJobStoreConformance } from "../../src/testing/conformance/job-store-conformance";
import { InMemoryJobStore } from "../../src/testing/memory/in-memory-job-store";

type Run = (this: unknown) => Promise<void>;

/** What a runner with jest's globals (`beforeAll`/`afterAll`, a timeout argument, no `this`) was given. */
interface Registered {
  readonly suites: string[];
  readonly tests: { readonly name: string; readonly run: Run; readonly timeoutMs: number | undefined }[];
  readonly hooks: { readonly kind: string; readonly run: Run; readonly timeoutMs: number | undefined }[];
}

const GLOBALS = ["describe", "it", "before", "after", "beforeAll", "afterAll"] as const;

/** Registers the suite with jest-like globals standing in for mocha's, then puts mocha's back. */
function registerWithJestGlobals(): Registered {
  const registered: Registered = { suites: [], tests: [], hooks: [] };
  const globals = globalThis as unknown as Record<string, unknown>;
  const saved = GLOBALS.map((name) => [name, globals[name]] as const);
  Object.assign(globals, {
    describe: (name: string, body: () => void) => {
      registered.suites.push(name);
      body();
    },
    it: (name: string, run: Run, timeoutMs?: number) => registered.tests.push({ name, run, timeoutMs }),
    before: undefined,
    after: undefined,
    beforeAll: (run: Run, timeoutMs?: number) => registered.hooks.push({ kind: "beforeAll", run, timeoutMs }),
    afterAll: (run: Run, timeoutMs?: number) => registered.hooks.push({ kind: "afterAll", run, timeoutMs }),
  });
  try {
    describeJobStoreConformance("InMemoryJobStore", async () => {
      const store = new InMemoryJobStore();
      return { store, withTransaction: (work) => store.transaction(work), waitUntilPast: async () => undefined, close: async () => undefined };
    });
  } finally {
    for (const [name, value] of saved) globals[name] = value;
  }
  return registered;
}

describe("describeJobStoreConformance under other test runners", () => {
  it("registers with beforeAll and afterAll when there is no before and after, passing each time limit as an argument", () => {
    const registered = registerWithJestGlobals();
    expect(registered.suites[0]).to.equal("InMemoryJobStore conforms to JobStore");
    expect(registered.hooks.map((hook) => hook.kind)).to.deep.equal(["beforeAll", "afterAll"]);
    expect(registered.tests.length).to.be.at.least(90);
    expect(registered.tests.every((test) => typeof test.timeoutMs === "number" && test.timeoutMs >= 60_000)).to.equal(true);
    expect(registered.tests.find((test) => test.name.startsWith("inserts 10,000 jobs"))?.timeoutMs).to.equal(120_000);
  });

  it("runs its hooks and tests when called without mocha's this", async () => {
    const registered = registerWithJestGlobals();
    const [before, after] = registered.hooks;
    await before!.run.call(undefined);
    const stores = registered.tests.find((test) => test.name === "stores a queued job with its options and reads it back")!;
    const rejection = await stores.run.call(undefined).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    await after!.run.call(undefined);
    expect(rejection).to.equal(undefined);
  });
});
