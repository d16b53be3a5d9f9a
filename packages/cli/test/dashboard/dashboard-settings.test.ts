import { expect } from "chai";
import * as dashboardPackage from "@stint/dashboard";
import { isLoopback, readDashboardSettings, type DashboardFlags } from "../../src/dashboard/dashboard-settings";

describe("readDashboardSettings", () => {
  const token = "a-token-of-sufficient-length";
  /** With the rules of the dashboard package the CLI is tested with. */
  const read = (flags: DashboardFlags) => readDashboardSettings(flags, dashboardPackage);

  it("binds to 127.0.0.1:3000 at the root by default, with the token from the environment", () => {
    expect(read({ noAuth: false, readOnly: false, envToken: token })).to.deep.include({
      host: "127.0.0.1",
      port: 3000,
      basePath: "/",
      auth: { token },
      readOnly: false,
    });
  });

  it("prefers --token to the environment and reads --basic-auth as user:password", () => {
    expect(read({ noAuth: false, readOnly: true, token, envToken: "other-token-0123456789" }).auth).to.deep.equal({ token });
    expect(read({ noAuth: false, readOnly: false, basicAuth: "ops:pass:with:colons" }).auth).to.deep.equal({
      basicAuth: { username: "ops", password: "pass:with:colons" },
    });
  });

  it("allows --no-auth on loopback addresses only", () => {
    expect(read({ noAuth: true, readOnly: false, host: "localhost" }).auth).to.equal("none");
    expect(() => read({ noAuth: true, readOnly: false, host: "10.0.0.5" })).to.throw(/loopback/);
    expect(() => read({ noAuth: true, readOnly: false, envToken: token })).to.throw(/cannot go with/);
    expect([isLoopback("127.0.0.1"), isLoopback("127.9.9.9"), isLoopback("::1"), isLoopback("0.0.0.0"), isLoopback("128.0.0.1")]).to.deep.equal([
      true,
      true,
      true,
      false,
      false,
    ]);
  });

  it("refuses a malformed base path, host or basic-auth credential", () => {
    expect(() => read({ noAuth: false, readOnly: false, envToken: token, basePath: "admin" })).to.throw(/--base-path/);
    expect(() => read({ noAuth: false, readOnly: false, envToken: token, host: "bad host" })).to.throw(/--host/);
    expect(() => read({ noAuth: false, readOnly: false, basicAuth: "nopassword" })).to.throw(/--basic-auth must be user:password/);
    expect(() => read({ noAuth: false, readOnly: false, basicAuth: ":password1" })).to.throw(/--basic-auth/);
  });

  it("reads allowed hosts from --allowed-hosts, else the environment, and refuses one with a port or scheme", () => {
    expect(read({ noAuth: true, readOnly: false }).allowedHosts).to.deep.equal([]);
    expect(read({ noAuth: true, readOnly: false, envAllowedHosts: " jobs.example.com , 10.0.0.5 " }).allowedHosts).to.deep.equal([
      "jobs.example.com",
      "10.0.0.5",
    ]);
    expect(read({ noAuth: false, readOnly: false, envToken: token, allowedHosts: "a.example", envAllowedHosts: "b.example" }).allowedHosts).to.deep.equal([
      "a.example",
    ]);
    for (const bad of ["jobs.example.com:443", "https://jobs.example.com", "a.example,,b.example"]) {
      expect(() => read({ noAuth: false, readOnly: false, envToken: token, allowedHosts: bad }), bad).to.throw(/--allowed-hosts .* without a port or scheme/);
    }
  });

  it("takes its lengths and path rule from the dashboard package it is given", () => {
    const strict = { MIN_TOKEN_LENGTH: 40, MIN_PASSWORD_LENGTH: 20, isBasePath: (path: string) => path === "/" || path === "/ops" };
    expect(() => readDashboardSettings({ noAuth: false, readOnly: false, envToken: token }, strict)).to.throw(/at least 40 characters/);
    expect(() => readDashboardSettings({ noAuth: false, readOnly: false, basicAuth: "ops:password1" }, strict)).to.throw(/at least 20 characters/);
    expect(() => readDashboardSettings({ noAuth: false, readOnly: false, envToken: token.repeat(2), basePath: "/admin" }, strict)).to.throw(/--base-path/);
    expect(readDashboardSettings({ noAuth: false, readOnly: false, envToken: token.repeat(2), basePath: "/ops" }, strict).basePath).to.equal("/ops");
  });
});
