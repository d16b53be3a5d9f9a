import { expect } from "chai";
import { durationOption } from "../../src/args/duration";

describe("durationOption", () => {
  it("names the option when the text is malformed", () => {
    expect(() => durationOption("--max-runtime", "4 minutes"))
      .to.throw(/--max-runtime must be a duration such as 500ms, 30s, 4m or 1h30m, got "4 minutes"/)
      .with.property("exitCode", 78);
  });

  it("names the option when the value is out of range", () => {
    expect(() => durationOption("--timeout", "0", { min: 1 }))
      .to.throw(/--timeout must be from 1ms to/)
      .with.property("exitCode", 78);
  });
});
