import assert from "node:assert/strict";
import { ErrorCode } from "../../errors/error-codes";
import { errorCodeOf } from "../../errors/stint-error";
import type { FirstRunAt, SchedulePlan, ScheduleRecord, ScheduleSpec } from "../../store/schedule-store";
import { assertFields } from "./conformance-assertions";
import { newJob, rejectionOf, type ScheduleStoreHarness, type ScheduleStoreHarnessFactory } from "./conformance-harness";
import { afterTests, beforeTests, suite, testCase } from "./test-runner";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** The first run `minutes` after the store's now (negative: already due). */
const inMinutes =
  (minutes: number): FirstRunAt =>
  (_spec, now) =>
    new Date(now.getTime() + minutes * MINUTE);

/** One fire at the schedule's due time, then the next an hour from now. */
const oneFireThenAnHour = (record: ScheduleRecord, now: Date): SchedulePlan => ({ fires: [record.nextRunAt], nextRunAt: new Date(now.getTime() + HOUR) });

/**
 * The behaviour every `ScheduleStore` must show, as a suite of the test
 * runner's `describe` and `it` (like `describeJobStoreConformance`): the
 * code's declarations stamped on the store's clock, a declared schedule
 * firing only within the grace and firing again once declared again,
 * runtime schedules created, changed and never expiring, one origin per
 * name, removal, and fires enqueued once per dedupe key. Assertions use
 * `node:assert`.
 *
 * The factory is called once for the suite, in its first hook; each test
 * uses schedule names and queues of its own.
 *
 * @example
 * ```ts
 * describeScheduleStoreConformance("InMemoryJobStore", async () => {
 *   const clock = new ManualClock();
 *   const store = new InMemoryJobStore({ clock });
 *   return { store, withTransaction: (work) => store.transaction(work), waitUntilPast: …, passScheduleTime: (ms) => clock.advance(ms), close: async () => undefined };
 * });
 * ```
 */
export function describeScheduleStoreConformance<Tx>(name: string, factory: ScheduleStoreHarnessFactory<Tx>): void {
  suite(`${name} conforms to ScheduleStore`, () => {
    let harness: ScheduleStoreHarness<Tx> | undefined;
    let names = 0;
    const current = (): ScheduleStoreHarness<Tx> => {
      if (harness === undefined) throw new Error("the conformance harness was not created");
      return harness;
    };
    const store = () => current().store;
    /** A schedule of a name and queue no other test uses. */
    const freshSpec = (overrides: Partial<ScheduleSpec> = {}): ScheduleSpec => {
      names += 1;
      return {
        name: `conformance-schedule-${names}`,
        queue: `conformance-schedule-queue-${names}`,
        cron: "0 * * * *",
        timeZone: "UTC",
        payloadJson: JSON.stringify({ n: names }),
        catchUp: 1,
        enabled: true,
        priority: 0,
        maxAttempts: 3,
        timeoutMs: null,
        ...overrides,
      };
    };
    const stored = async (scheduleName: string): Promise<ScheduleRecord | undefined> =>
      (await store().listSchedules()).find((record) => record.name === scheduleName);
    /** The names of `among` that one tick fires (other tests' schedules may fire too). */
    const firedNames = async (among: readonly string[], graceMs = HOUR): Promise<string[]> => {
      const fires = await store().fireDueSchedules({ limit: 1_000, plan: oneFireThenAnHour, graceMs });
      return fires.map((fire) => fire.schedule).filter((fired) => among.includes(fired));
    };

    beforeTests(async () => {
      harness = await factory();
    });
    afterTests(async () => {
      await harness?.close();
    });

    testCase("declares the code's schedules, stamping every declaration with the store's time, and leaves the others alone", async () => {
      const [a, b] = [freshSpec(), freshSpec()];
      assert.deepStrictEqual(await store().syncSchedules({ schedules: [a, b], firstRunAt: inMinutes(5) }), { conflicts: [] });
      const first = (await stored(a.name))!;
      assertFields(first, { origin: "code", queue: a.queue, cron: a.cron, lastFiredAt: null });
      assert.equal(first.nextRunAt.getTime() - first.declaredAt.getTime() >= 5 * MINUTE - 1_000, true, "next run from firstRunAt, given the store's now");
      const otherBefore = (await stored(b.name))!;
      await current().waitUntilPast(new Date(first.declaredAt.getTime() + 1));

      await store().syncSchedules({ schedules: [a], firstRunAt: inMinutes(50) });
      const again = (await stored(a.name))!;
      assert.ok(again.declaredAt > first.declaredAt, "a declaration stamps the schedule again, changed or not");
      assert.deepStrictEqual(again.nextRunAt, first.nextRunAt, "the next run of an unchanged schedule is kept");
      assert.deepStrictEqual(again.updatedAt, first.updatedAt, "an unchanged definition is not a change");
      assert.deepStrictEqual(await stored(b.name), otherBefore, "a schedule not given is left alone");
    });

    testCase("fires a declared schedule only while it was declared within the grace, and again once declared again", async () => {
      const kept = freshSpec();
      const dropped = freshSpec();
      const runtime = freshSpec();
      const ours = [kept.name, dropped.name, runtime.name];
      await store().syncSchedules({ schedules: [kept, dropped], firstRunAt: inMinutes(1) });
      await store().upsertSchedule({ schedule: runtime, firstRunAt: inMinutes(1) });
      await current().passScheduleTime(2 * HOUR);

      // A process restarted with code that declares only `kept`.
      await store().syncSchedules({ schedules: [kept], firstRunAt: inMinutes(1) });
      assert.deepStrictEqual((await firedNames(ours)).sort(), [kept.name, runtime.name].sort());
      const expired = (await stored(dropped.name))!;
      assertFields(expired, { origin: "code", lastFiredAt: null });
      assert.deepStrictEqual(await firedNames(ours, 3 * HOUR), [dropped.name], "a longer grace reaches back to its declaration");

      const revived = freshSpec();
      await store().syncSchedules({ schedules: [revived], firstRunAt: inMinutes(-1) });
      await current().passScheduleTime(2 * HOUR);
      assert.deepStrictEqual(await firedNames([revived.name]), []);
      await store().syncSchedules({ schedules: [revived], firstRunAt: inMinutes(1) });
      assert.deepStrictEqual(await firedNames([revived.name]), [revived.name], "declared again, it fires its missed run");
    });

    testCase("creates a runtime schedule, changes it keeping the next run, and recomputes the next run when the cron or time zone changes", async () => {
      const spec = freshSpec();
      const created = await store().upsertSchedule({ schedule: spec, firstRunAt: inMinutes(5) });
      assert.equal(created.created, true);
      assertFields(created.schedule, { name: spec.name, origin: "runtime", queue: spec.queue, cron: spec.cron, lastFiredAt: null });
      assert.deepStrictEqual(await stored(spec.name), created.schedule);

      const changed = await store().upsertSchedule({ schedule: { ...spec, payloadJson: '{"v":2}', priority: 3 }, firstRunAt: inMinutes(50) });
      assert.equal(changed.created, false);
      assertFields(changed.schedule, { origin: "runtime", priority: 3, nextRunAt: created.schedule.nextRunAt });
      assert.deepStrictEqual(JSON.parse(changed.schedule.payloadJson), { v: 2 });

      const recron = await store().upsertSchedule({ schedule: { ...spec, cron: "*/5 * * * *" }, firstRunAt: inMinutes(30) });
      assert.ok(recron.schedule.nextRunAt.getTime() - created.schedule.nextRunAt.getTime() >= 24 * MINUTE, "a new cron takes firstRunAt");
      const rezoned = await store().upsertSchedule({ schedule: { ...spec, cron: "*/5 * * * *", timeZone: "Europe/Berlin" }, firstRunAt: inMinutes(90) });
      assert.ok(rezoned.schedule.nextRunAt.getTime() - recron.schedule.nextRunAt.getTime() >= 59 * MINUTE, "a new time zone takes firstRunAt");
    });

    testCase("never lets a runtime schedule expire", async () => {
      const spec = freshSpec();
      await store().upsertSchedule({ schedule: spec, firstRunAt: inMinutes(1) });
      await current().passScheduleTime(48 * HOUR);
      assert.deepStrictEqual(await firedNames([spec.name]), [spec.name]);
    });

    testCase("keeps a name to one origin: a runtime schedule cannot take a declared name, nor a declaration a runtime one", async () => {
      const declared = freshSpec();
      await store().syncSchedules({ schedules: [declared], firstRunAt: inMinutes(5) });
      const before = await stored(declared.name);
      const refused = await rejectionOf(store().upsertSchedule({ schedule: { ...declared, priority: 9 }, firstRunAt: inMinutes(5) }));
      assert.equal(errorCodeOf(refused), ErrorCode.ScheduleConflict);
      assertFields(refused, { scheduleName: declared.name, heldBy: "code" });
      assert.deepStrictEqual(await stored(declared.name), before);

      const runtime = freshSpec();
      const other = freshSpec();
      const { schedule } = await store().upsertSchedule({ schedule: runtime, firstRunAt: inMinutes(5) });
      const result = await store().syncSchedules({ schedules: [{ ...runtime, priority: 9 }, other], firstRunAt: inMinutes(5) });
      assert.deepStrictEqual(result, { conflicts: [runtime.name] });
      assert.deepStrictEqual(await stored(runtime.name), schedule);
      assertFields(await stored(other.name), { origin: "code" });
    });

    testCase("removes a schedule of either origin, answering what it removed, and nothing for a name it does not hold", async () => {
      const declared = freshSpec();
      const runtime = freshSpec();
      await store().syncSchedules({ schedules: [declared], firstRunAt: inMinutes(-1) });
      await store().upsertSchedule({ schedule: runtime, firstRunAt: inMinutes(-1) });
      assertFields(await store().removeSchedule({ name: declared.name }), { name: declared.name, origin: "code" });
      assertFields(await store().removeSchedule({ name: runtime.name }), { name: runtime.name, origin: "runtime" });
      assert.equal(await store().removeSchedule({ name: declared.name }), undefined);
      assert.equal(await store().removeSchedule({ name: freshSpec().name }), undefined);
      assert.equal(await stored(declared.name), undefined);
      assert.deepStrictEqual(await firedNames([declared.name, runtime.name]), []);
    });

    testCase("enqueues each due fire with its dedupe key and the schedule's job settings, advances it, and reports a fire whose job exists", async () => {
      const spec = freshSpec({ priority: 4, maxAttempts: 7, timeoutMs: 9_000, payloadJson: '{"kind":"daily"}' });
      const off = freshSpec({ enabled: false });
      await store().syncSchedules({ schedules: [spec, off], firstRunAt: inMinutes(-1) });
      const { nextRunAt } = (await stored(spec.name))!;
      const [fire, ...others] = (await store().fireDueSchedules({ limit: 1_000, plan: oneFireThenAnHour, graceMs: HOUR })).filter((fired) =>
        [spec.name, off.name].includes(fired.schedule),
      );
      assert.deepStrictEqual(others, []);
      assertFields(fire, { schedule: spec.name, fireAt: nextRunAt, duplicate: false });
      const job = await store().getJob({ id: fire!.jobId });
      assertFields(job, { queue: spec.queue, priority: 4, maxAttempts: 7, timeoutMs: 9_000, state: "queued", runAt: nextRunAt });
      assertFields(job, { dedupeKey: `schedule:${spec.name}:${nextRunAt.toISOString()}`, payload: { kind: "daily" } });
      const advanced = (await stored(spec.name))!;
      assertFields(advanced, { lastFiredAt: nextRunAt });
      assert.ok(advanced.nextRunAt.getTime() > nextRunAt.getTime() + 50 * MINUTE);
      assert.deepStrictEqual(await firedNames([spec.name]), [], "fired once per due run");

      await current().passScheduleTime(2 * HOUR);
      await store().syncSchedules({ schedules: [spec], firstRunAt: inMinutes(1) });
      const due = (await stored(spec.name))!.nextRunAt;
      const existing = await store().enqueue(newJob(spec.queue, {}, { dedupeKey: `schedule:${spec.name}:${due.toISOString()}` }));
      const [again] = (await store().fireDueSchedules({ limit: 1_000, plan: oneFireThenAnHour, graceMs: HOUR })).filter(
        (fired) => fired.schedule === spec.name,
      );
      assertFields(again, { jobId: existing.id, duplicate: true });
    });
  });
}
