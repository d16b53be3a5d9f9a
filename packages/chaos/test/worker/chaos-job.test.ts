import { expect } from "chai";
import { ErrorCode, errorCodeOf } from "@stint/core";
import { parseChaosTask } from "../../src/worker/chaos-job";

describe("parseChaosTask", () => {
  it("reads a valid payload", () => {
    expect(parseChaosTask({ seq: 7, action: "sleep", ms: 20, firstMs: 1_000 })).to.deep.equal({ seq: 7, action: "sleep", ms: 20, firstMs: 1_000 });
  });

  const broken: readonly [string, unknown][] = [
    ["seq", { action: "sleep", ms: 0 }],
    ["seq", { seq: "7", action: "sleep", ms: 0 }],
    ["action", { seq: 1, action: "dance", ms: 0 }],
    ["ms", { seq: 1, action: "sleep", ms: -1 }],
    ["firstMs", { seq: 1, action: "sleep", ms: 0, firstMs: 1e9 }],
    ["colour", { seq: 1, action: "sleep", ms: 0, colour: "red" }],
    ["payload", [1]],
  ];
  for (const [field, payload] of broken) {
    it(`refuses ${JSON.stringify(payload)} with a parse error naming ${field}`, () => {
      let thrown: unknown;
      try {
        parseChaosTask(payload);
      } catch (error) {
        thrown = error;
      }
      expect(errorCodeOf(thrown)).to.equal(ErrorCode.Parse);
      expect((thrown as Error).message).to.match(new RegExp(`^${field} `));
    });
  }
});
