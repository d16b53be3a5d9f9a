import { expect } from "chai";
import { resolveRunSettings } from "@stint/core/internal";
import { formatSettings } from "../../src/output/settings-table";

describe("formatSettings: the --print-config table", () => {
  it("shows a queue's dead-letter queue from its job kind, and a dash for a kind without one", () => {
    const resolved = resolveRunSettings({ queues: [{ queue: "refund" }, { queue: "mail" }], env: {} });
    const settings = {
      ...resolved,
      queues: [
        { ...resolved.queues[0]!, deadLetterQueue: "refund-dead" },
        { ...resolved.queues[1]!, deadLetterQueue: null },
      ],
    };
    const lines = formatSettings(settings).split("\n");
    expect(lines.filter((line) => line.includes("dead-letter-queue")).map((line) => line.split(/\s{2,}/))).to.deep.equal([
      ["refund", "dead-letter-queue", "refund-dead", "code (job kind)"],
      ["mail", "dead-letter-queue", "-", "code (job kind)"],
    ]);
    expect(formatSettings(resolved), "settings that are not a worker's have no such row").not.to.contain("dead-letter-queue");
  });
});
