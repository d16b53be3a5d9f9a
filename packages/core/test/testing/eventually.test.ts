import { expect } from "chai";
import { ConfigError } from "../../src/errors/config-errors";
import { eventually } from "../../src/testing/eventually";

describe("eventually", () => {
  it("resolves to the first truthy value the check returns", async () => {
    let calls = 0;
    const value = await eventually(async () => (calls += 1) >= 3 && { calls }, { intervalMs: 1 });
    expect(value).to.deep.equal({ calls: 3 });
  });

  it("counts a check that throws as not yet", async () => {
    let calls = 0;
    const value = await eventually(
      () => {
        calls += 1;
        if (calls < 3) throw new Error("not listening yet");
        return "up";
      },
      { intervalMs: 1 },
    );
    expect(value).to.equal("up");
  });

  it("fails after the timeout, naming what it waited for and carrying the check's last error", async () => {
    const failure = new Error("connection refused");
    const error = await eventually(
      () => {
        throw failure;
      },
      { timeoutMs: 30, intervalMs: 5, what: "the server" },
    ).then(
      () => undefined,
      (thrown: unknown) => thrown as Error,
    );
    expect(error?.message).to.equal("timed out after 30 ms waiting for the server; the last check threw: connection refused");
    expect(error?.cause).to.equal(failure);
  });

  it("checks once more at the deadline and fails plainly when the condition stays false", async () => {
    let calls = 0;
    const error = await eventually(() => ((calls += 1), false), { timeoutMs: 0 }).then(
      () => undefined,
      (thrown: unknown) => thrown as Error,
    );
    expect(calls).to.equal(1);
    expect(error?.message).to.equal("timed out after 0 ms waiting for the condition");
  });

  it("refuses options it does not know, naming them", async () => {
    const error = await eventually(() => true, { timeout: 5 } as never).then(
      () => undefined,
      (thrown: unknown) => thrown as Error,
    );
    expect(error).to.be.instanceOf(ConfigError);
    expect(error?.message).to.contain("eventually.timeout");
  });
});
