import { expect } from "chai";
import { isLoopback, readDashboardSettings } from "../../src/dashboard/dashboard-settings";

describe("readDashboardSettings", () => {
  const token = "a-token-of-sufficient-length";

  it("binds to 127.0.0.1:3000 at the root by default, with the token from the environment", () => {
    expect(readDashboardSettings({ noAuth: false, readOnly: false, envToken: token })).to.deep.include({
      host: "127.0.0.1",
      port: 3000,
      basePath: "/",
      auth: { token },
      readOnly: false,
    });
  });

  it("prefers --token to the environment and reads --basic-auth as user:password", () => {
    expect(readDashboardSettings({ noAuth: false, readOnly: true, token, envToken: "other-token-0123456789" }).auth).to.deep.equal({ token });
    expect(readDashboardSettings({ noAuth: false, readOnly: false, basicAuth: "ops:pass:with:colons" }).auth).to.deep.equal({
      basicAuth: { username: "ops", password: "pass:with:colons" },
    });
  });

  it("allows --no-auth on loopback addresses only", () => {
    expect(readDashboardSettings({ noAuth: true, readOnly: false, host: "localhost" }).auth).to.equal("none");
    expect(() => readDashboardSettings({ noAuth: true, readOnly: false, host: "10.0.0.5" })).to.throw(/loopback/);
    expect(() => readDashboardSettings({ noAuth: true, readOnly: false, envToken: token })).to.throw(/cannot go with/);
    expect([isLoopback("127.0.0.1"), isLoopback("127.9.9.9"), isLoopback("::1"), isLoopback("0.0.0.0"), isLoopback("128.0.0.1")]).to.deep.equal([
      true,
      true,
      true,
      false,
      false,
    ]);
  });

  it("refuses a malformed base path, host or basic-auth credential", () => {
    expect(() => readDashboardSettings({ noAuth: false, readOnly: false, envToken: token, basePath: "admin" })).to.throw(/--base-path/);
    expect(() => readDashboardSettings({ noAuth: false, readOnly: false, envToken: token, host: "bad host" })).to.throw(/--host/);
    expect(() => readDashboardSettings({ noAuth: false, readOnly: false, basicAuth: "nopassword" })).to.throw(/--basic-auth must be user:password/);
    expect(() => readDashboardSettings({ noAuth: false, readOnly: false, basicAuth: ":password1" })).to.throw(/--basic-auth/);
  });
});
