import { expect } from "chai";
import { parseJobEventPayload } from "../../src/events/parse-job-event-payload";

describe("parseJobEventPayload", () => {
  const at = 1_764_190_000_000;

  it("reads a requeued entry's detail as its reason", () => {
    const notice = parseJobEventPayload(
      JSON.stringify({
        k: "requeued",
        q: "emails",
        t: at,
        j: [
          ["812", 2, "snooze"],
          ["813", 0, "run-now"],
        ],
      }),
    );
    expect(notice).to.deep.equal({
      kind: "events",
      events: [
        { type: "requeued", jobId: "812", queue: "emails", attempt: 2, at: new Date(at), reason: "snooze" },
        { type: "requeued", jobId: "813", queue: "emails", attempt: 0, at: new Date(at), reason: "run-now" },
      ],
    });
  });

  it("refuses a requeued entry without a known reason", () => {
    expect(parseJobEventPayload(JSON.stringify({ k: "requeued", q: "emails", t: at, j: [["812", 2]] }))).to.equal(undefined);
    expect(parseJobEventPayload(JSON.stringify({ k: "requeued", q: "emails", t: at, j: [["812", 2, "later"]] }))).to.equal(undefined);
  });

  it("reads a summary of requeued events", () => {
    expect(parseJobEventPayload(JSON.stringify({ k: "requeued", q: "emails", t: at, n: 5000 }))).to.deep.equal({
      kind: "summary",
      type: "requeued",
      queue: "emails",
      count: 5000,
    });
  });
});
