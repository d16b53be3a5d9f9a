import { defineJob } from "@stint/core";
import { expect } from "chai";
import pg from "pg";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { sqlEnqueue } from "./sql-enqueue";

const Entry = defineJob<{ readonly n: number }>("post-entry");

describe("the enqueue SQL function's groups and serial keys", () => {
  let test: TestSchema;
  let caller: pg.Client;

  beforeEach(async () => {
    test = await createTestSchema({ maxConnections: 4 });
    caller = new pg.Client({ connectionString: test.connectionString });
    await caller.connect();
  });
  afterEach(async () => {
    await caller.end();
    await test.drop();
  });

  it("stores a group, or a serial key with what its line does on death, as the library's enqueue does", async () => {
    const grouped = await sqlEnqueue(caller, test.schema, Entry.name, { n: 1 }, { group_key: "tenant:acme" });
    const held = await sqlEnqueue(caller, test.schema, Entry.name, { n: 2 }, { serial_key: "account:42" });
    const released = await sqlEnqueue(caller, test.schema, Entry.name, { n: 3 }, { serial_key: "doc:9", serial_on_dead: "release" });
    expect(await test.store.getJob({ id: grouped.id! })).to.deep.include({ group: "tenant:acme", serialKey: null });
    expect(await test.store.getJob({ id: held.id! })).to.deep.include({ group: null, serialKey: "account:42" });
    expect(await test.store.getJob({ id: released.id! })).to.deep.include({ serialKey: "doc:9" });
    // The queue now takes turns among its groups: one claim serves all three.
    const claimed = await test.store.claimBatch({ queue: Entry.name, workerId: "w", limit: 10, leaseMs: 60_000 });
    expect(claimed.map((job) => job.id).sort()).to.deep.equal([grouped.id, held.id, released.id].sort());
  });

  it("refuses a bad key, both kinds at once, or a death rule without a line, naming the parameter, and writes nothing", async () => {
    const refusal = async (options: Parameters<typeof sqlEnqueue>[4]) => (await sqlEnqueue(caller, test.schema, Entry.name, { n: 0 }, options)).refused;
    expect(await refusal({ group_key: "" })).to.deep.include({ code: "22023", column: "group_key" });
    expect(await refusal({ serial_key: "x".repeat(257) })).to.deep.include({ code: "22023", column: "serial_key" });
    expect(await refusal({ group_key: "a", serial_key: "b" })).to.deep.include({ code: "22023", column: "serial_key" });
    expect(await refusal({ serial_on_dead: "release" })).to.deep.include({ code: "22023", column: "serial_on_dead" });
    expect((await refusal({ serial_key: "a", serial_on_dead: "drop" }))?.message).to.equal('serial_on_dead must be hold or release, got "drop"');
    expect(await refusal({ group_key: "😀".repeat(128) }), "256 UTF-16 code units fit").to.equal(undefined);
    expect(await refusal({ group_key: "😀".repeat(129) })).to.deep.include({ column: "group_key" });
    const { rows } = await caller.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${test.schema}".jobs`);
    expect(rows[0]?.n).to.equal(1);
  });
});
