import { expect } from "chai";
import { ErrorCode } from "../../src/errors/error-codes";
import { errorCodeOf, hasErrorCode, StintError } from "../../src/errors/stint-error";
import { coerceError, describeError } from "../../src/errors/coerce-error";
import { MAX_ERROR_TEXT } from "../../src/limits";
import { permanent, retryAfter, snooze } from "../../src/errors/control-flow";
import { ConfigError } from "../../src/errors/config-errors";
import { RecordedError } from "../../src/errors/job-errors";

describe("stint errors", () => {
  it("are recognised by code, also on look-alike objects from another copy of the package", () => {
    expect(hasErrorCode(new ConfigError("concurrency", "too big"), ErrorCode.Config)).to.equal(true);
    expect(hasErrorCode({ code: "STINT_PERMANENT", message: "copy" }, ErrorCode.Permanent)).to.equal(true);
    expect(hasErrorCode(new Error("plain"), ErrorCode.Permanent)).to.equal(false);
    expect(errorCodeOf({ code: "ECONNRESET" })).to.equal(undefined);
  });

  it("keep the cause and their class name", () => {
    const cause = new Error("socket hang up");
    const error = permanent(cause);
    expect(error.code).to.equal(ErrorCode.Permanent);
    expect(error.cause).to.equal(cause);
    expect(error.name).to.equal("PermanentError");
    expect(error).to.be.instanceOf(StintError);
  });

  it("offer control-flow helpers with the delays asked for", () => {
    expect(retryAfter(30_000, new Error("429")).retryAfterMs).to.equal(30_000);
    expect(snooze(60_000).delayMs).to.equal(60_000);
    expect(snooze(60_000).code).to.equal(ErrorCode.Snooze);
  });

  it("name the option in configuration messages", () => {
    expect(new ConfigError("leaseMs", "must be at least 200").message).to.equal("Invalid option `leaseMs`: must be at least 200");
  });
});

describe("coerceError", () => {
  it("returns errors unchanged and wraps anything else", () => {
    const error = new Error("x");
    expect(coerceError(error)).to.equal(error);
    expect(coerceError("boom").message).to.equal("boom");
    expect(coerceError({ message: "from a plain object", name: "HttpError" }).name).to.equal("HttpError");
    expect(coerceError(42).message).to.equal("non-error thrown: 42");
  });
});

describe("describeError", () => {
  it("includes the stack and the causes", () => {
    const text = describeError(new Error("outer", { cause: new Error("inner") }));
    expect(text).to.match(/^Error: outer/);
    expect(text).to.contain("Caused by: Error: inner");
  });

  it(`caps the text at ${MAX_ERROR_TEXT} characters`, () => {
    expect(describeError(new Error("x".repeat(50_000))).length).to.be.at.most(MAX_ERROR_TEXT);
  });
});

describe("RecordedError", () => {
  it("rebuilds a recorded error: its code, its first line as the message, the whole text as the stack", () => {
    const error = new RecordedError(ErrorCode.Parse, "ParseError: invalid payload: n must be a number\n    at parse (worker.ts:1:1)");
    expect(hasErrorCode(error, ErrorCode.Parse)).to.equal(true);
    expect(error.message).to.equal("ParseError: invalid payload: n must be a number");
    expect(error.stack).to.equal(error.recorded);
  });

  it("reads a code stint does not know as STINT_UNKNOWN, and says so when no text was recorded", () => {
    const error = new RecordedError("E_CUSTOM", null);
    expect(error.code).to.equal(ErrorCode.Unknown);
    expect(error.message).to.equal("the job is dead (no error was recorded)");
    expect(error.recorded).to.equal("");
  });
});
