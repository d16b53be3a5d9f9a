import { expect } from "chai";
import { sql } from "kysely";
import { CompiledStatements, valueSlot } from "../../src/queries/compiled-statement";
import { createTestSchema, type TestSchema } from "../../src/testing";

describe("statements compiled once", () => {
  let test: TestSchema;

  before(async () => {
    test = await createTestSchema();
  });
  after(async () => {
    await test.drop();
  });

  it("builds a variant once and puts each call's values where its slots were, by name", async () => {
    const statements = new CompiledStatements<{ sum: number; label: string }>();
    let built = 0;
    const build = () => {
      built += 1;
      return sql<{
        sum: number;
        label: string;
      }>`SELECT ${valueSlot<number>("a")}::int + ${valueSlot<number>("b")}::int AS sum, ${valueSlot<string>("label")}::text AS label`;
    };
    const first = await statements.execute(test.db, "sum", build, { label: "one", b: 2, a: 1 });
    const second = await statements.execute(test.db, "sum", build, { a: 40, b: 2, label: "two", unused: true });
    expect(first.rows).to.deep.equal([{ sum: 3, label: "one" }]);
    expect(second.rows).to.deep.equal([{ sum: 42, label: "two" }]);
    expect(built).to.equal(1);
  });

  it("sends a missing value as NULL, and keeps variants apart by key", async () => {
    const statements = new CompiledStatements<{ value: string | null }>();
    const asText = () => sql<{ value: string | null }>`SELECT ${valueSlot("value")}::text AS value`;
    const constant = () => sql<{ value: string | null }>`SELECT 'fixed'::text AS value`;
    expect((await statements.execute(test.db, "text", asText, {})).rows).to.deep.equal([{ value: null }]);
    expect((await statements.execute(test.db, "constant", constant, { value: "x" })).rows).to.deep.equal([{ value: "fixed" }]);
  });

  it("refuses a statement with a value in place of a slot, which every call would otherwise repeat", async () => {
    const statements = new CompiledStatements<{ n: number }>();
    const error = await statements
      .execute(test.db, "literal", () => sql<{ n: number }>`SELECT ${7}::int AS n`, {})
      .then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
    expect(error)
      .to.be.instanceOf(TypeError)
      .with.property("message")
      .that.matches(/\$1 .* not a valueSlot/);
  });
});
