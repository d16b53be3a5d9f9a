import { expect } from "chai";
import { ManualClock } from "@stint/core/testing";
import { TEST_TOKEN } from "../support/dashboard-server";
import { cookieOf, send, serveDashboard, setCookieLine, signIn, type ServeMode, type ServedDashboard } from "../support/serve-dashboard";

const SESSION = "stint_dashboard_session";
const CSRF = "stint_dashboard_csrf";
const HOUR = 3_600_000;
const WRONG_TOKEN = "wrong-token-0123456789abcdef";

async function isPaused(served: ServedDashboard, queue: string): Promise<boolean> {
  return (await served.test.store.listQueueControls()).find((entry) => entry.queue === queue)?.paused ?? false;
}

/** A page's CSRF cookie and token, read with a loopback `Host` as the real page would be. */
async function formTokens(served: ServedDashboard, headers: Record<string, string>): Promise<{ cookie: string; token: string }> {
  const page = await send(served, `${served.base}/`, { headers });
  expect(page.status).to.equal(200);
  return { cookie: cookieOf(page, CSRF)!, token: /name="_csrf" value="([^"]+)"/.exec(page.body)![1]! };
}

for (const mode of ["standalone", "mounted"] as ServeMode[]) {
  describe(`the dashboard's security findings (${mode})`, () => {
    describe("DNS rebinding without auth", () => {
      let served: ServedDashboard;
      before(async () => {
        served = await serveDashboard(mode, { auth: "none" });
        // A queue the overview lists, so that its page carries a form (and a CSRF token).
        await served.test.store.setQueueControls("send-invoice", { paused: false });
      });
      after(() => served.close());

      it("refuses a page asked for under a foreign Host with 421 and a body that says why", async () => {
        const answer = await send(served, `${served.base}/jobs`, { headers: { host: `rebind.evil.example:${served.port}` } });
        expect(answer.status).to.equal(421);
        expect(answer.body).to.contain("answers only at localhost").and.contain("rebind.evil.example");
        expect(answer.body).to.not.contain("Queues");
        const forwarded = await send(served, `${served.base}/`, { headers: { host: `127.0.0.1:${served.port}`, "x-forwarded-host": "rebind.evil.example" } });
        expect(forwarded.status).to.equal(421);
      });

      it("refuses a POST pause with the page's token and a matching foreign Host and Origin, and the queue stays running", async () => {
        const { cookie, token } = await formTokens(served, { host: `localhost:${served.port}` });
        const pause = (host: string) =>
          send(served, `${served.base}/queues/send-invoice/pause`, {
            method: "POST",
            headers: { host, origin: `http://${host}`, cookie, "content-type": "application/x-www-form-urlencoded" },
            body: `_csrf=${encodeURIComponent(token)}`,
          });
        expect((await pause(`rebind.evil.example:${served.port}`)).status).to.equal(421);
        expect(await isPaused(served, "send-invoice")).to.equal(false);
        // The same form from the real name goes through: the refusal above is the Host's doing.
        expect((await pause(`localhost:${served.port}`)).status).to.equal(303);
        expect(await isPaused(served, "send-invoice")).to.equal(true);
      });

      it("answers every loopback spelling of the Host, with or without a port", async () => {
        const hosts = [`localhost:${served.port}`, "localhost", "LOCALHOST", `127.0.0.1:${served.port}`, "127.8.9.10", `[::1]:${served.port}`, "[::1]"];
        for (const host of hosts) expect((await send(served, `${served.base}/`, { headers: { host } })).status, host).to.equal(200);
        for (const host of ["localhost.evil.example", "127.0.0.1.evil.example", "0.0.0.0", "[::2]", "evil.example@127.0.0.1"]) {
          expect((await send(served, `${served.base}/`, { headers: { host } })).status, host).to.equal(421);
        }
      });
    });

    describe("allowed hosts with a credential", () => {
      const bearer = { authorization: `Bearer ${TEST_TOKEN}` };

      it("answers any Host by default, since a rebound page gets no credential", async () => {
        const served = await serveDashboard(mode);
        try {
          expect((await send(served, `${served.base}/`, { headers: { ...bearer, host: "jobs.internal:8443" } })).status).to.equal(200);
          expect((await send(served, `${served.base}/`, { headers: { host: "rebind.evil.example" } })).status).to.equal(401);
        } finally {
          await served.close();
        }
      });

      it("answers only the listed hosts when allowedHosts is given", async () => {
        const served = await serveDashboard(mode, { allowedHosts: ["Jobs.Example.com", "10.0.0.5"] });
        try {
          for (const host of ["jobs.example.com", "jobs.example.com:443", "10.0.0.5:3000"]) {
            expect((await send(served, `${served.base}/`, { headers: { ...bearer, host } })).status, host).to.equal(200);
          }
          expect((await send(served, `${served.base}/`, { headers: { ...bearer, host: "evil.example" } })).status).to.equal(421);
          expect((await send(served, `${served.base}/`, { headers: { ...bearer, host: `127.0.0.1:${served.port}` } })).status).to.equal(421);
        } finally {
          await served.close();
        }
      });
    });

    describe("sessions", () => {
      let served: ServedDashboard;
      let clock: ManualClock;
      before(async () => {
        clock = new ManualClock();
        served = await serveDashboard(mode, { clock });
      });
      after(() => served.close());

      const open = (cookie: string | undefined) => send(served, `${served.base}/`, { headers: { cookie: cookie ?? "" } });

      it("gives each sign-in its own session cookie, scoped and limited in time", async () => {
        const first = await signIn(served, TEST_TOKEN);
        const second = await signIn(served, TEST_TOKEN);
        expect(first.status).to.equal(303);
        expect(cookieOf(first, SESSION)).to.match(/=[A-Za-z0-9_-]{43}$/);
        expect(cookieOf(first, SESSION)).to.not.equal(cookieOf(second, SESSION));
        const line = setCookieLine(first, SESSION)!;
        expect(line)
          .to.contain("HttpOnly")
          .and.contain("SameSite=Strict")
          .and.contain(`Path=${served.base === "" ? "/" : served.base}`);
        expect(line).to.contain("Max-Age=43200");
        expect((await open(cookieOf(first, SESSION))).status).to.equal(200);
        expect((await open(cookieOf(second, SESSION))).status).to.equal(200);
      });

      it("refuses the cookie after sign-out, and keeps the other browser signed in", async () => {
        const mine = cookieOf(await signIn(served, TEST_TOKEN), SESSION)!;
        const other = cookieOf(await signIn(served, TEST_TOKEN), SESSION)!;
        const { cookie: csrfCookie, token } = await formTokens(served, { cookie: mine });
        const out = await send(served, `${served.base}/logout`, {
          method: "POST",
          headers: { cookie: `${mine}; ${csrfCookie}`, "content-type": "application/x-www-form-urlencoded" },
          body: `_csrf=${encodeURIComponent(token)}`,
        });
        expect(out.status).to.equal(303);
        expect(setCookieLine(out, SESSION)).to.contain("Max-Age=0");
        const after = await open(mine);
        expect(after.status).to.equal(401);
        expect(after.body).to.contain('name="token"');
        expect((await open(other)).status).to.equal(200);
      });

      it("refuses a session 12 hours after sign-in even when used all along, and one left idle for 2 hours", async () => {
        const busy = cookieOf(await signIn(served, TEST_TOKEN), SESSION)!;
        for (let hour = 1; hour < 12; hour += 1) {
          await clock.advance(HOUR);
          expect((await open(busy)).status, `after ${hour} h`).to.equal(200);
        }
        await clock.advance(HOUR);
        expect((await open(busy)).status).to.equal(401);
        const idle = cookieOf(await signIn(served, TEST_TOKEN), SESSION)!;
        await clock.advance(2 * HOUR - 1_000);
        expect((await open(idle)).status).to.equal(200);
        await clock.advance(2 * HOUR);
        expect((await open(idle)).status).to.equal(401);
      });

      it("refuses a cookie value it never gave, such as the one every browser used to share", async () => {
        expect((await open(`${SESSION}=D45ouMnYxyvh1hB1F2aGPe3RpU0v9rK1yb66qzTbGVg`)).status).to.equal(401);
      });
    });

    describe("the redirect after sign-in", () => {
      let served: ServedDashboard;
      before(async () => {
        served = await serveDashboard(mode);
      });
      after(() => served.close());

      it("refuses control characters in next, encoded or raw, with 400 (never 500)", async () => {
        for (const query of ["/%09/evil.example", "/%0a/x", "/%0d%0aSet-Cookie:%20x=1", "/%7f/x"]) {
          expect((await send(served, `${served.base}/login?next=${query}`)).status, query).to.equal(400);
        }
        for (const next of ["/\t/evil.example", "/\n/x", `${served.base}/\r\nLocation: //evil.example`]) {
          const answer = await signIn(served, TEST_TOKEN, { next });
          expect(answer.status, JSON.stringify(next)).to.equal(400);
          expect(answer.headers.location).to.equal(undefined);
        }
      });

      it("goes to the overview for another site, a scheme or a path outside the dashboard", async () => {
        const home = `${served.base}/`;
        const elsewhere = ["//evil.example", "/\\evil.example", "/\\/evil.example", "https://evil.example/", "javascript:alert(1)", "evil.example"];
        for (const next of elsewhere) expect((await signIn(served, TEST_TOKEN, { next })).headers.location, next).to.equal(home);
        if (served.base !== "") {
          for (const next of ["/health", `${served.base}/../health`, `${served.base}x/`]) {
            expect((await signIn(served, TEST_TOKEN, { next })).headers.location, next).to.equal(home);
          }
        }
        const encoded = (await signIn(served, TEST_TOKEN, { next: `${served.base}/%2F%2Fevil.example` })).headers.location!;
        expect(encoded.startsWith(`${served.base}/`) && !encoded.startsWith("//")).to.equal(true);
      });

      it("keeps a path of the dashboard with its query", async () => {
        const next = `${served.base}/jobs?state=dead&queue=send-invoice`;
        expect((await signIn(served, TEST_TOKEN, { next })).headers.location).to.equal(next);
      });
    });

    describe("the sign-in rate limit", () => {
      let served: ServedDashboard;
      let clock: ManualClock;
      before(async () => {
        clock = new ManualClock();
        served = await serveDashboard(mode, { clock });
      });
      after(() => served.close());

      it("answers 429 with Retry-After after 10 wrong tokens from one address; another address still signs in; the address may try again after a minute", async () => {
        const statuses: number[] = [];
        let last: Awaited<ReturnType<typeof signIn>> | undefined;
        for (let attempt = 0; attempt < 30; attempt += 1) {
          last = await signIn(served, WRONG_TOKEN, { localAddress: "127.0.0.1" });
          statuses.push(last.status);
        }
        expect(statuses.slice(0, 10)).to.deep.equal(Array(10).fill(401));
        expect(statuses.slice(10)).to.deep.equal(Array(20).fill(429));
        expect(Number(last!.headers["retry-after"])).to.be.within(1, 60);
        // The right token from the same address waits too, else the limit would tell a guesser when it guessed right.
        expect((await signIn(served, TEST_TOKEN, { localAddress: "127.0.0.1" })).status).to.equal(429);
        expect((await signIn(served, TEST_TOKEN, { localAddress: "127.0.0.2" })).status).to.equal(303);
        await clock.advance(60_000);
        expect((await signIn(served, TEST_TOKEN, { localAddress: "127.0.0.1" })).status).to.equal(303);
      });

      it("counts wrong bearer tokens too", async () => {
        const get = (token: string) => send(served, `${served.base}/`, { headers: { authorization: `Bearer ${token}` }, localAddress: "127.0.0.3" });
        for (let attempt = 0; attempt < 10; attempt += 1) expect((await get(WRONG_TOKEN)).status).to.equal(401);
        expect((await get(WRONG_TOKEN)).status).to.equal(429);
        expect((await get(TEST_TOKEN)).status).to.equal(429);
        await clock.advance(60_000);
        expect((await get(TEST_TOKEN)).status).to.equal(200);
      });
    });
  });
}
