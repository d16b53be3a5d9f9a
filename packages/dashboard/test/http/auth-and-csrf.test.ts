import { expect } from "chai";
import type { IncomingMessage } from "node:http";
import { resolveAuth } from "../../src/http/auth";
import { CsrfTokens } from "../../src/http/csrf";

function request(authorization?: string): IncomingMessage {
  return { headers: authorization === undefined ? {} : { authorization } } as IncomingMessage;
}

describe("the dashboard's credentials", () => {
  const token = "s3cret-token-0123456789";

  it("accepts the bearer token or its session cookie, and names the viewer by a digest of the token", () => {
    const auth = resolveAuth({ token });
    const who = auth.identify(request(`Bearer ${token}`), undefined);
    expect(who).to.match(/^token:[0-9a-f]{8}$/);
    expect(who).to.not.contain(token.slice(0, 8));
    expect(auth.identify(request(), auth.signIn(token))).to.equal(who);
    expect(auth.identify(request("Bearer wrong-token-0123456789"), undefined)).to.equal(undefined);
    expect(auth.identify(request(), "forged-cookie")).to.equal(undefined);
    expect(auth.signIn("wrong")).to.equal(undefined);
  });

  it("accepts basic auth with the right user and password only", () => {
    const auth = resolveAuth({ basicAuth: { username: "alice", password: "correct horse" } });
    const basic = (text: string) => request(`Basic ${Buffer.from(text).toString("base64")}`);
    expect(auth.identify(basic("alice:correct horse"), undefined)).to.equal("user:alice");
    expect(auth.identify(basic("alice:wrong horse"), undefined)).to.equal(undefined);
    expect(auth.identify(basic("bob:correct horse"), undefined)).to.equal(undefined);
    expect(auth.identify(request(), undefined)).to.equal(undefined);
  });

  it("refuses to start without a credential, or with a weak one, naming the option", () => {
    expect(() => resolveAuth(undefined)).to.throw(/`auth`: is required/);
    expect(() => resolveAuth({ token: "short" })).to.throw(/`auth.token`: must be a text of at least 16 characters/);
    expect(() => resolveAuth({ basicAuth: { username: "a:b", password: "long enough" } })).to.throw(/auth.basicAuth.username/);
    expect(() => resolveAuth({ basicAuth: { username: "alice", password: "short" } })).to.throw(/auth.basicAuth.password/);
  });

  it("binds a CSRF token to the browser's nonce and the viewer", () => {
    const csrf = new CsrfTokens(resolveAuth({ token }).csrfKey);
    const nonce = csrf.newNonce();
    const valid = csrf.tokenFor(nonce, "token:1a2b3c4d");
    expect(csrf.check(nonce, "token:1a2b3c4d", valid)).to.equal(true);
    expect(csrf.check(csrf.newNonce(), "token:1a2b3c4d", valid)).to.equal(false);
    expect(csrf.check(nonce, "user:mallory", valid)).to.equal(false);
    expect(csrf.check(nonce, "token:1a2b3c4d", undefined)).to.equal(false);
    expect(csrf.check(undefined, "token:1a2b3c4d", valid)).to.equal(false);
    // Another instance with the same credential accepts it (several replicas behind one address).
    expect(new CsrfTokens(resolveAuth({ token }).csrfKey).check(nonce, "token:1a2b3c4d", valid)).to.equal(true);
  });
});
