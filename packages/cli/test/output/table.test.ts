import { expect } from "chai";
import { formatCount, formatTable, truncate } from "../../src/output/table";

describe("formatTable", () => {
  it("aligns text left and numbers right under a rule", () => {
    const text = formatTable(
      [{ title: "queue" }, { title: "dead", align: "right" }],
      [
        ["send-invoice", "2"],
        ["ai", "1,024"],
      ],
    );
    expect(text.split("\n")).to.deep.equal(["queue          dead", "------------  -----", "send-invoice      2", "ai            1,024"]);
  });

  it("leaves no trailing spaces", () => {
    const text = formatTable([{ title: "a" }, { title: "note" }], [["x", ""]]);
    for (const line of text.split("\n")) expect(line).to.equal(line.trimEnd());
  });
});

describe("formatCount and truncate", () => {
  it("groups thousands", () => {
    expect(formatCount(1_234_567)).to.equal("1,234,567");
  });

  it("keeps the first line and marks the cut", () => {
    expect(truncate("Error: boom\n    at x", 60)).to.equal("Error: boom…");
    expect(truncate("abcdef", 4)).to.equal("abc…");
    expect(truncate("abc", 4)).to.equal("abc");
  });
});
