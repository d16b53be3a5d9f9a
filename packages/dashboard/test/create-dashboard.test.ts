import { expect } from "chai";
import { createDashboard, type DashboardOptions } from "../src/index";

const TOKEN = { token: "a-token-of-sufficient-length" };

describe("createDashboard", () => {
  it("refuses options it cannot serve safely, naming the option", () => {
    const refusals: [Partial<DashboardOptions> & Record<string, unknown>, RegExp][] = [
      [{ connectionString: "postgres://localhost/x" }, /`auth`: is required/],
      [{ auth: TOKEN }, /`db`: give exactly one of db .* or connectionString/],
      [{ auth: TOKEN, connectionString: "postgres://localhost/x", basePath: "admin" }, /`basePath`/],
      [{ auth: TOKEN, connectionString: "postgres://localhost/x", basePath: "/a/../b" }, /`basePath`/],
      [{ auth: TOKEN, connectionString: "postgres://localhost/x", payloads: "some" as never }, /`payloads`/],
      [{ auth: TOKEN, connectionString: "postgres://localhost/x", refreshMs: 10 }, /`refreshMs`/],
      [{ auth: TOKEN, connectionString: "postgres://localhost/x", readonly: true }, /readonly/],
      [{ auth: TOKEN, db: {} as never }, /`db`: must be a Kysely instance/],
      [{ auth: TOKEN, connectionString: "postgres://localhost/x", events: { subscribe: 1 } as never }, /`events`: must be a JobEventSource/],
    ];
    for (const [options, message] of refusals) {
      expect(() => createDashboard(options as DashboardOptions), JSON.stringify(Object.keys(options))).to.throw(message);
    }
  });

  it("normalises the base path and ends the pool it opened", async () => {
    const dashboard = createDashboard({ auth: TOKEN, connectionString: "postgres://localhost/x", basePath: "/admin/jobs/" });
    expect(dashboard.basePath).to.equal("/admin/jobs");
    await dashboard.close();
    await dashboard.close();
  });
});
