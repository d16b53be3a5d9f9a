import { expect } from "chai";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { JobClient } from "@stint/core";
import { SendInvoiceEmail } from "../../src/jobs/send-invoice-email";
import { adminDashboard, serveWithDashboard } from "../../src/operate/admin-dashboard";
import { createAppFixture, type AppFixture } from "../support/app-fixture";

const TOKEN = "admin-dashboard-token-0123456789";

describe("the example app's admin dashboard (node:http, mounted under /admin/jobs)", () => {
  let app: AppFixture;
  let server: Server;
  let origin: string;

  beforeEach(async () => {
    app = await createAppFixture();
    server = serveWithDashboard(adminDashboard({ db: app.test.db, schema: app.test.schema, log: app.log, token: TOKEN }));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await app.drop();
  });

  it("serves the overview under its base path to the token, and leaves other paths to the app", async () => {
    const { id } = await new JobClient(app.store).enqueue(SendInvoiceEmail, { invoiceId: 812 });
    const headers = { authorization: `Bearer ${TOKEN}` };
    const overview = await fetch(`${origin}/admin/jobs/`, { headers });
    expect(overview.status).to.equal(200);
    expect(await overview.text())
      .to.contain('data-queue="send-invoice-email"')
      .and.contain('href="/admin/jobs/jobs?queue=send-invoice-email"');
    const job = await (await fetch(`${origin}/admin/jobs/jobs/${id}`, { headers })).text();
    expect(job).to.contain("&quot;invoiceId&quot;: 812");
    expect((await fetch(`${origin}/admin/jobs/`)).status).to.equal(401);
    const other = await fetch(`${origin}/health`, { headers });
    expect(other.status).to.equal(404);
    expect(await other.text()).to.equal("Not found\n");
  });
});
