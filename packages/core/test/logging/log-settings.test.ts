import { expect } from "chai";
import { ErrorCode } from "../../src/errors/error-codes";
import { hasErrorCode } from "../../src/errors/stint-error";
import { readLogSettings } from "../../src/logging/log-settings";

describe("readLogSettings", () => {
  it("reads STINT_LOG_LEVEL and STINT_LOG_FORMAT", () => {
    expect(readLogSettings({ STINT_LOG_LEVEL: "debug", STINT_LOG_FORMAT: "pretty" })).to.deep.equal({ level: "debug", format: "pretty" });
    expect(readLogSettings({ STINT_LOG_LEVEL: " warn " })).to.deep.equal({ level: "warn" });
  });

  it("leaves out a variable that is unset or empty", () => {
    expect(readLogSettings({})).to.deep.equal({});
    expect(readLogSettings({ STINT_LOG_LEVEL: "", STINT_LOG_FORMAT: "  " })).to.deep.equal({});
  });

  it("refuses a level it does not know, naming the variable and the accepted values", () => {
    let thrown: unknown;
    try {
      readLogSettings({ STINT_LOG_LEVEL: "verbose" });
    } catch (error) {
      thrown = error;
    }
    expect((thrown as Error).message).to.equal('STINT_LOG_LEVEL must be one of error, warn, info, debug; got "verbose"');
    expect(hasErrorCode(thrown, ErrorCode.Config)).to.equal(true);
    expect(thrown).to.have.property("variable", "STINT_LOG_LEVEL");
  });

  it("refuses a format it does not know, naming the variable", () => {
    expect(() => readLogSettings({ STINT_LOG_FORMAT: "yaml" })).to.throw('STINT_LOG_FORMAT must be one of json, pretty; got "yaml"');
  });
});
