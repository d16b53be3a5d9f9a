import { expect } from "chai";
import { parseJobsFilter } from "../../src/data/jobs-filter";

function parse(query: string) {
  return parseJobsFilter(new URLSearchParams(query));
}

describe("parseJobsFilter", () => {
  it("reads every filter and treats empty fields as none", () => {
    const filter = parse("queue=send-invoice&state=dead&q=+timeout+&before=812&from=&to=");
    expect(filter).to.include({ queue: "send-invoice", state: "dead", errorText: "timeout", beforeId: "812" });
    expect(filter.createdFrom).to.equal(undefined);
    expect(parse("")).to.deep.equal({ raw: { queue: "", state: "", q: "", group: "", line: "", from: "", to: "", tz: "" } });
  });

  it("reads a queue whose name breaks the naming rule, as a queue written by SQL may", () => {
    expect(parse("queue=Odd+Queue%2F%C3%9C").queue).to.equal("Odd Queue/Ü");
    expect(parse("queue=Upper").queue).to.equal("Upper");
    expect(parse("queue=billing+%2F+eu+west").queue).to.equal("billing / eu west");
    expect(parse(`queue=${"é".repeat(512)}`).queue).to.have.lengthOf(512);
    expect(parse("queue=+padded+").queue, "kept as given").to.equal(" padded ");
    expect(parse("queue=+++").queue, "blank is no filter").to.equal(undefined);
  });

  it("reads a group or a serial key of the queue, as given, and refuses one without a queue or both at once", () => {
    expect(parse("queue=sync&group=+acme+corp")).to.include({ queue: "sync", group: " acme corp" }).and.not.have.property("serialKey");
    expect(parse("queue=sync&line=account%3A42")).to.include({ serialKey: "account:42" }).and.not.have.property("group");
    expect(() => parse("group=acme")).to.throw(/group/);
    expect(() => parse("queue=sync&group=a&line=b")).to.throw(/line/);
    expect(() => parse(`queue=sync&group=${"k".repeat(257)}`)).to.throw(/group/);
  });

  it("reads the cursor of a newer page", () => {
    expect(parse("after=812")).to.include({ afterId: "812" }).and.not.have.property("beforeId");
  });

  it("reads a wall-clock time in the viewer's offset, and a zoned time as it says", () => {
    expect(parse("from=2024-05-01T09:30&tz=120").createdFrom?.toISOString()).to.equal("2024-05-01T07:30:00.000Z");
    expect(parse("from=2024-05-01T09:30&tz=-300").createdFrom?.toISOString()).to.equal("2024-05-01T14:30:00.000Z");
    expect(parse("to=2024-05-01T09:30:15Z").createdTo?.toISOString()).to.equal("2024-05-01T09:30:15.000Z");
    expect(parse("to=2024-05-01T09:30:00+02:00").createdTo?.toISOString()).to.equal("2024-05-01T07:30:00.000Z");
  });

  const refused: [string, RegExp][] = [
    ["state=nope", /"state" must be one of/],
    ["queue=a%0Ab", /"queue" must be a queue name of 1 to 512 characters without control characters/],
    ["queue=a%C2%85b", /"queue" must be a queue name of 1 to 512/],
    [`queue=${"q".repeat(513)}`, /"queue" must be a queue name of 1 to 512/],
    ["before=5&after=4", /"after" cannot be given with before/],
    ["after=x", /"after" must be a job id/],
    ["before=0", /"before" must be a job id/],
    ["before=99999999999999999999", /"before" must be a job id/],
    ["from=2023-02-29T10:00", /"from" is not a date and time that exists/],
    ["from=2023-02-01T24:00", /"from" is not a date and time that exists/],
    ["to=soon", /"to" must be a time/],
    ["from=2024-01-01T00:00&tz=1000", /"tz" must be within 14 hours/],
    ["tz=east", /"tz" must be minutes/],
    [`q=${"x".repeat(201)}`, /"q" must be at most 200 characters/],
    ["q=a&q=b", /"q" is given more than once/],
    ["q=%00", /"q" must not contain a NUL character/],
  ];
  for (const [query, message] of refused) {
    it(`refuses ${query.slice(0, 40)} with a 400 naming the parameter`, () => {
      let thrown: unknown;
      try {
        parse(query);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).to.include({ status: 400, code: "STINT_DASHBOARD_BAD_REQUEST" });
      expect((thrown as Error).message).to.match(message);
    });
  }
});
