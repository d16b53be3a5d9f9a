import { expect } from "chai";
import express from "express";
import Fastify from "fastify";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { createDashboard, type DashboardHandler } from "../../src/index";
import { recordingLogger, TEST_TOKEN, type LoggedLine } from "../support/dashboard-server";
import { makeDeadJobs } from "../support/seed-jobs";

const BASE = "/admin/jobs";
const AUTH = { authorization: `Bearer ${TEST_TOKEN}` };

/** How each framework mounts the dashboard, as its README shows; resolves to the address it listens on. */
const MOUNTS: Record<string, (dashboard: DashboardHandler) => Promise<{ origin: string; close(): Promise<void> }>> = {
  async express(dashboard) {
    const app = express();
    app.get("/health", (_request, response) => void response.send("app ok"));
    app.use(express.urlencoded({ extended: false }));
    app.use(dashboard);
    const server: Server = await new Promise((resolve) => {
      const listening = app.listen(0, "127.0.0.1", () => resolve(listening));
    });
    return {
      origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
    };
  },
  async fastify(dashboard) {
    const app = Fastify();
    app.get("/health", async () => "app ok");
    app.addContentTypeParser("application/x-www-form-urlencoded", (_request, _payload, done) => done(null));
    const serve = (request: { raw: Parameters<DashboardHandler>[0] }, reply: { hijack(): void; raw: Parameters<DashboardHandler>[1] }): void => {
      reply.hijack();
      dashboard(request.raw, reply.raw);
    };
    app.all(BASE, serve);
    app.all(`${BASE}/*`, serve);
    const origin = await app.listen({ port: 0, host: "127.0.0.1" });
    return { origin, close: () => app.close() };
  },
};

for (const [framework, mount] of Object.entries(MOUNTS)) {
  describe(`the dashboard mounted in ${framework}`, () => {
    let test: TestSchema;
    let log: LoggedLine[];
    let served: { origin: string; close(): Promise<void> };

    before(async () => {
      test = await createTestSchema({ prefix: "stint_dash", maxConnections: 4 });
      log = [];
      const dashboard = createDashboard({ db: test.db, schema: test.schema, basePath: BASE, auth: { token: TEST_TOKEN }, log: recordingLogger(log) });
      served = await mount(dashboard);
    });
    after(async () => {
      await served.close();
      await test.drop();
    });

    it("serves its pages and assets under the base path and leaves the app's other routes to the app", async () => {
      const page = await fetch(`${served.origin}${BASE}/`, { headers: AUTH });
      expect(page.status).to.equal(200);
      const html = await page.text();
      expect(html).to.contain("Queues");
      const stylesheet = /href="([^"]*dashboard\.css[^"]*)"/.exec(html)![1]!.replaceAll("&amp;", "&");
      expect(stylesheet.startsWith(`${BASE}/`)).to.equal(true);
      const css = await fetch(`${served.origin}${stylesheet}`);
      expect(css.status).to.equal(200);
      expect(css.headers.get("content-type")).to.match(/^text\/css/);
      expect(await (await fetch(`${served.origin}/health`)).text()).to.equal("app ok");
      expect((await fetch(`${served.origin}${BASE}/`, { redirect: "manual" })).status, "no credential").to.not.equal(200);
    });

    it("retries a dead job from a form post with the credential and the CSRF token, and refuses it without the token", async () => {
      const [id] = (await makeDeadJobs(test.store, "send-invoice", 1, () => "Error: mailbox full")) as [string];
      const pageResponse = await fetch(`${served.origin}${BASE}/jobs/${id}`, { headers: AUTH });
      const cookie = pageResponse.headers
        .getSetCookie()
        .find((line) => line.startsWith("stint_dashboard_csrf="))!
        .split(";")[0]!;
      const token = /name="_csrf" value="([^"]+)"/.exec(await pageResponse.text())![1]!;
      const post = (body: string) =>
        fetch(`${served.origin}${BASE}/jobs/${id}/retry`, {
          method: "POST",
          redirect: "manual",
          headers: { ...AUTH, cookie, "content-type": "application/x-www-form-urlencoded" },
          body,
        });
      expect((await post("")).status).to.equal(403);
      expect((await test.store.getJob({ id }))?.state).to.equal("dead");
      expect((await post(`_csrf=${encodeURIComponent(token)}`)).status).to.equal(303);
      expect((await test.store.getJob({ id }))?.state).to.equal("queued");
      expect(log.some((line) => line.level === "info" && line.message.includes(id))).to.equal(true);
    });
  });
}
