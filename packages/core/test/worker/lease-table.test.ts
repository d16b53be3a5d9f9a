import { expect } from "chai";
import { LeaseTable } from "../../src/worker/lease-table";

interface Lease {
  readonly id: string;
  readonly attempt: number;
  readonly name: string;
}

const lease = (id: string, attempt: number, name: string): Lease => ({ id, attempt, name });

describe("LeaseTable", () => {
  it("finds a lease by its job's id and attempt, and no other attempt of the job", () => {
    const table = new LeaseTable<Lease>();
    const held = lease("812", 2, "held");
    table.add(held);
    expect(table.find({ id: "812", attempt: 2 })).to.equal(held);
    expect(table.find({ id: "812", attempt: 1 })).to.equal(undefined);
    expect(table.find({ id: "813", attempt: 2 })).to.equal(undefined);
    expect(table.size).to.equal(1);
  });

  it("holds an older and a newer attempt of one job side by side, and releases each alone", () => {
    const table = new LeaseTable<Lease>();
    const older = lease("7", 1, "older");
    const newer = lease("7", 2, "newer");
    table.add(older);
    table.add(newer);
    expect(table.size).to.equal(2);
    expect(table.find(older)).to.equal(older);
    expect(table.find(newer)).to.equal(newer);
    table.delete(older);
    expect(table.find(older)).to.equal(undefined);
    expect(table.find(newer)).to.equal(newer);
    expect(table.values()).to.deep.equal([newer]);
    table.delete(newer);
    expect(table.size).to.equal(0);
    expect(table.values()).to.deep.equal([]);
  });

  it("replaces the lease of the same attempt (claimed again after a crash), and ignores the release of the replaced one", () => {
    const table = new LeaseTable<Lease>();
    const first = lease("9", 3, "first");
    const again = lease("9", 3, "again");
    table.add(first);
    table.add(again);
    expect(table.size).to.equal(1);
    table.delete(first);
    expect(table.find({ id: "9", attempt: 3 })).to.equal(again);
    table.add(lease("9", 4, "newer"));
    const replacement = lease("9", 4, "replacement");
    table.add(replacement);
    expect(table.size).to.equal(2);
    expect(table.find({ id: "9", attempt: 4 })).to.equal(replacement);
  });

  it("lists every lease in a new array, so leases can be dropped while it is walked", () => {
    const table = new LeaseTable<Lease>();
    const all = [lease("1", 1, "a"), lease("2", 1, "b"), lease("2", 2, "c")];
    for (const one of all) table.add(one);
    for (const one of table.values()) table.delete(one);
    expect(table.size).to.equal(0);
  });
});
