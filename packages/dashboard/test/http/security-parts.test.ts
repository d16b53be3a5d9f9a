import { expect } from "chai";
import { ManualClock } from "@stint/core/testing";
import { createDashboard, type DashboardOptions } from "../../src/index";
import { hostOfHeader, isLoopbackHost, readAllowedHosts } from "../../src/http/host-policy";
import { safeNext } from "../../src/http/next-path";
import { SessionStore } from "../../src/http/sessions";
import { SignInLimiter } from "../../src/http/sign-in-limiter";

describe("the dashboard's security parts", () => {
  it("reads Host headers into one form and knows loopback names", () => {
    expect(
      ["LocalHost:3101", "127.0.0.1:80", "[0:0:0:0:0:0:0:1]:3101", "jobs.example.com.", "evil.example@127.0.0.1", "a b", "x:99999"].map(hostOfHeader),
    ).to.deep.equal(["localhost", "127.0.0.1", "[::1]", "jobs.example.com", undefined, undefined, undefined]);
    expect(["localhost", "127.255.0.1", "[::1]", "localhost.evil.example", "0.0.0.0", "[::2]"].map(isLoopbackHost)).to.deep.equal([
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
  });

  it("checks allowedHosts, naming the first entry that is not a host", () => {
    expect(readAllowedHosts(["Jobs.Example.com", "10.0.0.5", "::1", "[fe80::1]"])).to.deep.equal(["jobs.example.com", "10.0.0.5", "[::1]", "[fe80::1]"]);
    expect(readAllowedHosts(undefined)).to.deep.equal([]);
    for (const entry of ["https://jobs.example.com", "jobs.example.com:443", "jobs.example.com/x", "", "*.example.com", 42]) {
      expect(() => readAllowedHosts([entry]), String(entry)).to.throw(/`allowedHosts`: must hold host names or addresses/);
    }
    expect(() => readAllowedHosts("jobs.example.com")).to.throw(/`allowedHosts`: must be an array/);
  });

  it("keeps a next path under the base path, sends anything else home, and refuses control characters", () => {
    expect(safeNext("/admin/jobs/jobs?state=dead", "/admin/jobs")).to.equal("/admin/jobs/jobs?state=dead");
    expect(safeNext("/admin/jobs", "/admin/jobs")).to.equal("/admin/jobs");
    for (const next of ["//evil.example", "/\\evil.example", "https://evil.example", "/admin/jobsx", "/admin/jobs/../x", "", "jobs"]) {
      expect(safeNext(next, "/admin/jobs"), next).to.equal("/admin/jobs/");
    }
    expect(safeNext("/jobs/ünïcode", "")).to.equal("/jobs/%C3%BCn%C3%AFcode");
    for (const next of ["/\t/evil.example", "/\n/x", "/\u0085/x", "/\u007f"])
      expect(() => safeNext(next, ""), JSON.stringify(next)).to.throw(/"next" must not hold control characters/);
  });

  it("keeps at most maxSessions sessions, ending the oldest first", () => {
    const sessions = new SessionStore({ maxAgeMs: 60_000, idleMs: 60_000, maxSessions: 3 }, new ManualClock());
    const ids = [sessions.open(), sessions.open(), sessions.open(), sessions.open()];
    expect(sessions.size).to.equal(3);
    expect(ids.map((id) => sessions.isOpen(id))).to.deep.equal([false, true, true, true]);
    expect(sessions.isOpen("not-a-session")).to.equal(false);
    expect(sessions.isOpen(undefined)).to.equal(false);
  });

  it("remembers at most maxAddresses addresses, forgetting ended windows first", async () => {
    const clock = new ManualClock();
    const limiter = new SignInLimiter({ failures: 1, windowMs: 60_000, maxAddresses: 2 }, clock);
    limiter.fail("10.0.0.1");
    await clock.advance(60_000);
    limiter.fail("10.0.0.2");
    limiter.fail("10.0.0.3");
    expect(() => limiter.check("10.0.0.2")).to.throw(/Too many wrong credentials/);
    expect(() => limiter.check("10.0.0.3")).to.throw(/Too many wrong credentials/);
    limiter.fail("10.0.0.4");
    expect(() => limiter.check("10.0.0.2"), "forgotten to make room").to.not.throw();
  });

  it("refuses malformed security options, naming them", () => {
    const base = { auth: { token: "a-token-of-sufficient-length" }, connectionString: "postgres://localhost/x" };
    const refusals: [Partial<DashboardOptions> & Record<string, unknown>, RegExp][] = [
      [{ allowedHosts: ["https://jobs.example.com"] }, /`allowedHosts`/],
      [{ sessionMaxAgeMs: 1_000 }, /`sessionMaxAgeMs`: must be an integer from 60000/],
      [{ sessionIdleMs: -1 }, /`sessionIdleMs`/],
      [{ clock: {} as never }, /`clock`/],
    ];
    for (const [options, message] of refusals) {
      expect(() => createDashboard({ ...base, ...options }), JSON.stringify(options)).to.throw(message);
    }
  });
});
