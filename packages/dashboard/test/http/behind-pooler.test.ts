import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { ThrowawayPgBouncer } from "@stint/throwaway-postgres";
import { createDashboard, type DashboardHandler } from "../../src/index";
import { TEST_TOKEN } from "../support/dashboard-server";
import { makeDeadJobs } from "../support/seed-jobs";

const AUTH = { authorization: `Bearer ${TEST_TOKEN}` };

describe("the dashboard behind PgBouncer in transaction mode", () => {
  let test: TestSchema;
  let bouncer: ThrowawayPgBouncer;
  let dashboard: DashboardHandler;
  let server: Server;
  let origin: string;
  let deadIds: readonly string[];

  before(async () => {
    test = await createTestSchema({ prefix: "stint_dash_pooled", maxConnections: 4 });
    deadIds = await makeDeadJobs(test.store, "send-invoice", 3, () => "Error: mailbox full");
    bouncer = await ThrowawayPgBouncer.start({ upstream: test.connectionString, poolMode: "transaction" });
    dashboard = createDashboard({ auth: { token: TEST_TOKEN }, connectionString: bouncer.connectionString, schema: test.schema });
    server = createServer(dashboard);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
    await dashboard?.close();
    await bouncer?.stop();
    await test?.drop();
  });

  async function page(path: string): Promise<string> {
    const response = await fetch(`${origin}${path}`, { headers: AUTH });
    const body = await response.text();
    expect(response.status, `${path}: ${body.slice(0, 300)}`).to.equal(200);
    return body;
  }

  it("reads the overview, a filtered list and a job's page through the pooler, with DATABASE_URL alone", async () => {
    expect(await page("/")).to.contain("send-invoice");
    expect(await page("/jobs?queue=send-invoice&state=dead")).to.contain("mailbox full");
    expect(await page(`/jobs/${deadIds[0]!}`)).to.contain("mailbox full");
  });
});
