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
    const statements = new CompiledStatements();
    let built = 0;
    const build = () => {
      built += 1;
      return sql<{
        sum: number;
        label: string;
      }>`SELECT ${valueSlot<number>("a")}::int + ${valueSlot<number>("b")}::int AS sum, ${valueSlot<string>("label")}::text AS label`;
    };
    const first = statements.statement("sum", build, { label: "one", b: 2, a: 1 });
    const second = statements.statement("sum", build, { a: 40, b: 2, label: "two", unused: true });
    expect((await test.statements.run(first)).rows).to.deep.equal([{ sum: 3, label: "one" }]);
    expect((await test.statements.run(second)).rows).to.deep.equal([{ sum: 42, label: "two" }]);
    expect(built).to.equal(1);
    expect(second.name, "one variant, one prepared-statement name")
      .to.equal(first.name)
      .and.match(/^stint_[0-9a-f]{24}$/);
  });

  it("sends a missing value as NULL, and keeps variants apart by key", async () => {
    const statements = new CompiledStatements();
    const asText = () => sql<{ value: string | null }>`SELECT ${valueSlot("value")}::text AS value`;
    const constant = () => sql<{ value: string | null }>`SELECT 'fixed'::text AS value`;
    const text = statements.statement("text", asText, {});
    const fixed = statements.statement("constant", constant, { value: "x" });
    expect((await test.statements.run(text)).rows).to.deep.equal([{ value: null }]);
    expect((await test.statements.run(fixed)).rows).to.deep.equal([{ value: "fixed" }]);
    expect(text.name).to.not.equal(fixed.name);
  });

  it("refuses a statement with a value in place of a slot, which every call would otherwise repeat", async () => {
    const statements = new CompiledStatements();
    let error: unknown;
    try {
      statements.statement("literal", () => sql<{ n: number }>`SELECT ${7}::int AS n`, {});
    } catch (thrown) {
      error = thrown;
    }
    expect(error)
      .to.be.instanceOf(TypeError)
      .with.property("message")
      .that.matches(/\$1 .* not a valueSlot/);
  });
});
