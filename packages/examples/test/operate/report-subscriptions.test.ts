import { expect } from "chai";
import { container as rootContainer, type DependencyContainer } from "tsyringe";
import { ErrorCode, errorCodeOf } from "@stint/core";
import { SCHEDULE_STORE } from "@stint/core/driver";
import { subscribeToWeeklyReport, unsubscribeFromWeeklyReport } from "../../src/operate/report-subscriptions";
import { createAppFixture, type AppFixture } from "../support/app-fixture";

describe("weekly reports customers subscribe to (runtime schedules)", () => {
  let app: AppFixture;
  let container: DependencyContainer;

  beforeEach(async () => {
    app = await createAppFixture();
    container = rootContainer.createChildContainer();
    container.registerInstance(SCHEDULE_STORE, app.store);
  });
  afterEach(async () => {
    await app.drop();
  });

  it("schedules a customer's report in their time zone, changes it on a new subscription, and removes it", async () => {
    const first = await subscribeToWeeklyReport(container, { customerId: 42, recipient: "ap@customer.example", timeZone: "America/New_York" });
    expect(first).to.include({ name: "weekly-report.customer-42", origin: "runtime", queue: "weekly-report", cron: "0 7 * * 1", maxAttempts: 5 });
    expect(first.nextRunAt.getUTCDay()).to.equal(1);
    expect([11, 12]).to.include(first.nextRunAt.getUTCHours());

    const moved = await subscribeToWeeklyReport(container, { customerId: 42, recipient: "ap@customer.example", timeZone: "Asia/Tokyo" });
    expect(moved.nextRunAt.getUTCHours()).to.equal(22);
    expect((await app.store.listSchedules()).map((schedule) => schedule.name)).to.deep.equal(["weekly-report.customer-42"]);

    expect(await unsubscribeFromWeeklyReport(container, 42)).to.equal(true);
    expect(await unsubscribeFromWeeklyReport(container, 42)).to.equal(false);
    expect(await app.store.listSchedules()).to.deep.equal([]);
  });

  it("refuses a recipient the report's schema rejects, storing nothing", async () => {
    const error = await subscribeToWeeklyReport(container, { customerId: 7, recipient: "not an address", timeZone: "UTC" }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(errorCodeOf(error)).to.equal(ErrorCode.Payload);
    expect(await app.store.listSchedules()).to.deep.equal([]);
  });
});
