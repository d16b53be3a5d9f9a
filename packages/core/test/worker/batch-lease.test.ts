import { expect } from "chai";
import { BatchLease } from "../../src/worker/batch-lease";
import { claimedJob as job } from "../support/claimed-job";

describe("BatchLease", () => {
  it("counts from the earliest claim's time and is on disk with the latest claim", () => {
    const lease = new BatchLease(4, 10_000);
    lease.add(job("1"), 4, 10_000);
    lease.add(job("2"), 6, 12_000);
    expect(lease).to.include({ claim: 6, deadline: 10_000, size: 2, held: 2 });
  });

  it("lets an attempt go once its outcome is recorded, once", () => {
    const lease = new BatchLease(0, 10_000);
    for (const id of ["1", "2", "3"]) lease.add(job(id), 0, 10_000);
    lease.recorded(1);
    lease.recorded(1);
    const held: string[] = [];
    lease.forEachHeld((id) => held.push(id));
    expect(held).to.deep.equal(["1", "3"]);
    expect(lease.held).to.equal(2);
    expect([lease.holds(0), lease.holds(1)]).to.deep.equal([true, false]);
  });

  it("finds a held attempt by job id and attempt number", () => {
    const lease = new BatchLease(0, 10_000);
    lease.add(job("1"), 0, 10_000);
    lease.add(job("2"), 0, 10_000);
    expect([lease.indexOf("2", 1), lease.indexOf("2", 2), lease.indexOf("3", 1)]).to.deep.equal([1, -1, -1]);
    lease.recorded(1);
    expect(lease.indexOf("2", 1)).to.equal(-1);
  });

  it("stops one attempt or every held one, and nothing once it has let go of its attempts", () => {
    const lease = new BatchLease(0, 10_000);
    for (const id of ["1", "2", "3"]) lease.add(job(id), 0, 10_000);
    const [first, second, third] = lease.attempts;
    const stop = new Error("stop");
    lease.abort(0, stop);
    expect([first!.signal.reason, second!.signal.reason]).to.deep.equal([stop, undefined]);
    lease.recorded(2);
    const all = new Error("all");
    lease.abortHeld(all);
    expect([first!.signal.reason, second!.signal.reason, third!.signal.reason]).to.deep.equal([stop, all, undefined]);

    const later = new BatchLease(0, 10_000);
    later.add(job("4"), 0, 10_000);
    const [kept] = later.attempts;
    later.letGo();
    later.abortHeld(all);
    expect(kept!.signal.reason).to.equal(undefined);
    expect(later.attempts).to.deep.equal([]);
    const held: string[] = [];
    later.forEachHeld((id, attempt) => held.push(`${id}/${attempt}`));
    expect(held).to.deep.equal(["4/1"]);
  });
});
