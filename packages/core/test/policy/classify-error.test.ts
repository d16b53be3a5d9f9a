import { expect } from "chai";
import { isRetryableByDefault } from "../../src/policy/classify-error";
import { JobTimeoutError, ParseError, PermanentError, RetryableError } from "../../src/errors/job-errors";
import { InfrastructureError } from "../../src/errors/infrastructure-error";
import { permanent, retryAfter } from "../../src/errors/control-flow";

function httpError(status: number): Error {
  return Object.assign(new Error(`HTTP ${status}`), { status });
}

describe("isRetryableByDefault", () => {
  it("treats permanent, parse and validation errors as permanent", () => {
    expect(isRetryableByDefault(new PermanentError("no such customer"))).to.equal(false);
    expect(isRetryableByDefault(permanent(new Error("bad")))).to.equal(false);
    expect(isRetryableByDefault(new ParseError("invoiceId missing"))).to.equal(false);
    expect(isRetryableByDefault(Object.assign(new Error("x"), { name: "ValidationError" }))).to.equal(false);
    expect(isRetryableByDefault(Object.assign(new Error("x"), { name: "ZodError" }))).to.equal(false);
    expect(isRetryableByDefault(new SyntaxError("Unexpected token"))).to.equal(false);
  });

  it("treats auth and client HTTP statuses as permanent", () => {
    for (const status of [400, 401, 403, 404, 422]) expect(isRetryableByDefault(httpError(status)), String(status)).to.equal(false);
  });

  it("retries timeouts, rate limits, server errors and connection errors", () => {
    expect(isRetryableByDefault(new JobTimeoutError(1_000))).to.equal(true);
    expect(isRetryableByDefault(new RetryableError("later"))).to.equal(true);
    expect(isRetryableByDefault(retryAfter(5_000))).to.equal(true);
    expect(isRetryableByDefault(new InfrastructureError("connection reset"))).to.equal(true);
    for (const status of [408, 429, 500, 502, 503]) expect(isRetryableByDefault(httpError(status)), String(status)).to.equal(true);
    expect(isRetryableByDefault(Object.assign(new Error("reset"), { code: "ECONNRESET" }))).to.equal(true);
    expect(isRetryableByDefault({ response: { status: 503 } })).to.equal(true);
  });

  it("retries errors it knows nothing about, including non-errors", () => {
    expect(isRetryableByDefault(new Error("something odd"))).to.equal(true);
    expect(isRetryableByDefault("a string")).to.equal(true);
    expect(isRetryableByDefault(undefined)).to.equal(true);
  });
});
