import { parseArgs } from "node:util";
import { expect } from "chai";
import { listValues } from "../../src/args/list-option";
import { toParseArgsConfig } from "../../src/args/parse-args-config";
import type { OptionSpec } from "../../src/command";

const OPTIONS: Readonly<Record<string, OptionSpec>> = {
  queue: { type: "string", multiple: true, value: "name[,name…]", description: "queues" },
  limit: { type: "string", short: "n", value: "N", description: "how many" },
  json: { type: "boolean", description: "JSON" },
};

/** What `--queue` reads as from `args`, parsed as a command's options are. */
function queuesOf(args: readonly string[]): string[] | undefined {
  const { values } = parseArgs({ args: [...args], options: toParseArgsConfig(OPTIONS), allowPositionals: true, strict: true });
  return listValues("--queue", values["queue"]);
}

describe("toParseArgsConfig", () => {
  it("marks only the options declared multiple, keeping the short names", () => {
    expect(toParseArgsConfig(OPTIONS)).to.deep.equal({
      queue: { type: "string", multiple: true },
      limit: { type: "string", short: "n" },
      json: { type: "boolean" },
    });
  });

  it("keeps every value of a multiple option in order, and the last of any other", () => {
    const { values } = parseArgs({ args: ["--queue", "a", "-n", "1", "--queue", "b", "-n", "2"], options: toParseArgsConfig(OPTIONS), strict: true });
    expect(values).to.deep.equal({ queue: ["a", "b"], limit: "2" });
  });
});

describe("listValues", () => {
  it("reads a repeated option and comma lists alike, in order, each name once", () => {
    expect(queuesOf(["--queue", "emails", "--queue", "reports"])).to.deep.equal(["emails", "reports"]);
    expect(queuesOf(["--queue", "emails,reports"])).to.deep.equal(["emails", "reports"]);
    expect(queuesOf(["--queue", " emails , reports", "--queue=invoices", "--queue", "emails"])).to.deep.equal(["emails", "reports", "invoices"]);
  });

  it("is undefined when the option is absent", () => {
    expect(queuesOf(["--json"])).to.equal(undefined);
    expect(listValues("--queue", undefined)).to.equal(undefined);
  });

  it("reads a single string as a one-time option", () => {
    expect(listValues("--queue", "a,b")).to.deep.equal(["a", "b"]);
  });

  for (const args of [["--queue", ""], ["--queue=a,"], ["--queue", "a,,b"], ["--queue", "a", "--queue", " "]]) {
    it(`refuses an empty name (${args.join(" ")}) with a usage error naming the option`, () => {
      expect(() => queuesOf(args))
        .to.throw(/^--queue got an empty name in "/)
        .with.property("exitCode", 2);
    });
  }
});
