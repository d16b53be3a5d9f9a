import { expect } from "chai";
import { toQuestionMarks } from "../../src/connection/question-mark-placeholders";

describe("toQuestionMarks (statements for knex's raw)", () => {
  it("turns each $n into a ? with its value, in the order they appear", () => {
    expect(toQuestionMarks({ text: "SELECT $2::int, $1::text, $2::int", values: ["a", 7] })).to.deep.equal({
      sql: "SELECT ?::int, ?::text, ?::int",
      bindings: [7, "a", 7],
    });
  });

  it("keeps values as they are, arrays and nulls included", () => {
    const runAt = new Date(0);
    expect(toQuestionMarks({ text: "SELECT unnest($1::text[]), $2, $3", values: [["a", null], null, runAt] }).bindings).to.deep.equal([
      ["a", null],
      null,
      runAt,
    ]);
  });

  it("writes every other ? as \\?, inside literals too (knex reads no quotes)", () => {
    expect(toQuestionMarks({ text: "SELECT payload ? 'key', '?' AS q, $1", values: [1] }).sql).to.equal("SELECT payload \\? 'key', '\\?' AS q, ?");
  });

  it("leaves $n alone inside literals, quoted names, dollar quotes and comments", () => {
    const text = [
      "SELECT '$1 it''s $2', \"col$1\", E'\\'$1', $$ $1 $$, $tag$ $1 $tag$",
      "-- a comment with $1",
      "/* a /* nested */ comment with $1 */ $1, a$1",
    ].join("\n");
    const { sql, bindings } = toQuestionMarks({ text, values: ["only"] });
    expect(sql).to.equal(text.replace("*/ $1,", "*/ ?,"));
    expect(bindings).to.deep.equal(["only"]);
  });

  it("refuses a parameter without a value", () => {
    expect(() => toQuestionMarks({ text: "SELECT $2", values: [1] })).to.throw(TypeError, "$2 has no value (1 given)");
    expect(() => toQuestionMarks({ text: "SELECT $0", values: [1] })).to.throw(TypeError, "$0 has no value");
  });

  it("refuses a backslash right before a mark, which knex would take for an escape", () => {
    expect(() => toQuestionMarks({ text: "SELECT E'\\?'", values: [] })).to.throw(TypeError, /backslash/);
  });
});
