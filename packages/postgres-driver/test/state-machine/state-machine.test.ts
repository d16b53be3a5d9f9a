import { expect } from "chai";
import fc from "fast-check";
import { sql } from "kysely";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { COMMANDS } from "./commands";
import { emptyModel, type Model, type Real } from "./model";
import { REGRESSIONS, REPLAYS } from "./regressions";

const RUNS = Number(process.env["STINT_STATE_MACHINE_RUNS"] ?? 100);
const MAX_COMMANDS = 30;

describe("the job state machine against PostgreSQL (model-based, fast-check)", function () {
  this.timeout(120_000);
  let t: TestSchema;
  let real: Real;

  before(async () => {
    t = await createTestSchema({ prefix: "stint_sm", maxConnections: 6 });
    real = { store: t.store, db: t.db, schema: t.schema };
  });
  after(async () => {
    await t.drop();
  });

  /** A fresh model over an empty table: each sequence starts from nothing. */
  async function setup(): Promise<{ model: Model; real: Real }> {
    await sql`TRUNCATE ${sql.id(t.schema, "jobs")}, ${sql.id(t.schema, "finished_jobs")} RESTART IDENTITY`.execute(t.db);
    return { model: emptyModel(), real };
  }

  const property = (replayPath?: string) =>
    fc.asyncProperty(
      fc.commands(COMMANDS, { maxCommands: MAX_COMMANDS, size: "max", ...(replayPath === undefined ? {} : { replayPath }) }),
      async (commands) => {
        await fc.asyncModelRun(setup, commands);
      },
    );

  for (const regression of REGRESSIONS) {
    it(`keeps its invariants in a kept sequence: ${regression.name}`, async () => {
      await fc.asyncModelRun(setup, regression.commands());
    });
  }

  for (const replay of REPLAYS) {
    it(`keeps its invariants in the replay of seed ${replay.seed}`, async () => {
      await fc.assert(property(replay.replayPath), { seed: replay.seed, path: replay.path, endOnFailure: true });
    });
  }

  it(`keeps its invariants in ${RUNS} random sequences of up to ${MAX_COMMANDS} commands across three workers`, async () => {
    const details = await fc.check(property(), { numRuns: RUNS });
    // On failure the message shows the shrunk sequence, its seed, path and replayPath: keep them in regressions.ts.
    expect(details.failed, fc.defaultReportMessage(details) ?? "").to.equal(false);
  });
});
