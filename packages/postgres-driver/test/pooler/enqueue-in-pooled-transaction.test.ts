import { JobClient } from "@stint/core";
import { ThrowawayPgBouncer } from "@stint/throwaway-postgres";
import { expect } from "chai";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { TRANSACTION_KINDS, type OpenTransactionKind } from "../connection/transaction-kinds";
import { TaskJob } from "../worker-lifecycle/scripted-worker";

/** Transactions at once per kind: more than the pooler's server connections, so each client meets several of them. */
const CONCURRENT = 6;
const ROUNDS = 3;

describe("enqueue in a caller's transaction behind PgBouncer in transaction mode", () => {
  let test: TestSchema;
  let bouncer: ThrowawayPgBouncer;

  before(async () => {
    test = await createTestSchema();
    bouncer = await ThrowawayPgBouncer.start({ upstream: test.connectionString, poolMode: "transaction", poolSize: 2 });
  });
  after(async () => {
    await bouncer?.stop();
    await test?.drop();
  });

  for (const kind of TRANSACTION_KINDS) {
    it(`${kind.name}: every transaction's jobs commit, none refused by a statement prepared on another server connection`, async () => {
      const client = new JobClient(test.store);
      const opened: OpenTransactionKind = await kind.open(bouncer.connectionString);
      const ids: string[] = [];
      try {
        for (let round = 0; round < ROUNDS; round += 1) {
          const results = await Promise.all(
            Array.from({ length: CONCURRENT }, (_, n) =>
              opened.withTransaction(async (transaction) => {
                const one = await client.enqueue(TaskJob, { n }, { transaction, dedupeKey: `${kind.name}:${round}:${n}` });
                const [two] = await client.enqueueMany(TaskJob, [{ payload: { n } }], { transaction });
                return [one.id, two!.id];
              }),
            ),
          );
          ids.push(...results.flat());
        }
      } finally {
        await opened.close();
      }

      expect(new Set(ids).size).to.equal(CONCURRENT * ROUNDS * 2);
      for (const id of ids) expect((await test.store.getJob({ id }))?.state).to.equal("queued");
    });
  }
});
