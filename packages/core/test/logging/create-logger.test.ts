import { expect } from "chai";
import { createLogger } from "../../src/logging/create-logger";
import { LogCapture } from "./log-capture";

describe("createLogger", () => {
  it("writes JSON lines to the stream it is given, at the level STINT_LOG_LEVEL names", async () => {
    const stream = new LogCapture(false);
    const log = createLogger({ stream, env: { STINT_LOG_LEVEL: "debug" } });
    log.debug("Claimed 3 jobs", { queue: "send-invoice" });
    const [line] = await stream.lines(1);
    expect(JSON.parse(line!)).to.include({ level: "debug", message: "Claimed 3 jobs", queue: "send-invoice" });
  });

  it("lets STINT_LOG_LEVEL override the entry point's default level", async () => {
    const stream = new LogCapture(false);
    const log = createLogger({ stream, defaultLevel: "warn", env: { STINT_LOG_LEVEL: "info" } });
    log.info("Started worker");
    expect(await stream.lines(1)).to.have.length(1);
  });

  it("keeps to the default level when STINT_LOG_LEVEL is unset", async () => {
    const stream = new LogCapture(false);
    const log = createLogger({ stream, defaultLevel: "warn", env: {} });
    log.info("not written");
    log.warn("written");
    const lines = await stream.lines(1);
    expect(lines.map((line) => (JSON.parse(line) as { message: string }).message)).to.deep.equal(["written"]);
  });

  it("writes pretty lines when STINT_LOG_FORMAT is pretty, even off a terminal", async () => {
    const stream = new LogCapture(false);
    createLogger({ stream, env: { STINT_LOG_FORMAT: "pretty" } }).info("Started worker", { queue: "q" });
    const [line] = await stream.lines(1);
    expect(line).to.match(/^\d\d:\d\d:\d\d\.\d{3} .*info.* Started worker {2}queue=q$/);
  });

  it("chooses pretty on a terminal and JSON elsewhere by looking at its own stream", async () => {
    const terminal = new LogCapture(true);
    createLogger({ stream: terminal, env: {} }).info("on a terminal");
    expect((await terminal.lines(1))[0]).to.not.match(/^\{/);
    const pipe = new LogCapture(false);
    createLogger({ stream: pipe, env: {} }).info("in a pipe");
    expect(JSON.parse((await pipe.lines(1))[0]!)).to.include({ message: "in a pipe" });
  });

  it("lets STINT_LOG_FORMAT=json win over a terminal", async () => {
    const terminal = new LogCapture(true);
    createLogger({ stream: terminal, env: { STINT_LOG_FORMAT: "json" } }).info("shipped");
    expect(JSON.parse((await terminal.lines(1))[0]!)).to.include({ message: "shipped" });
  });

  it("refuses an invalid STINT_LOG_LEVEL or STINT_LOG_FORMAT at creation, naming the variable", () => {
    expect(() => createLogger({ env: { STINT_LOG_LEVEL: "verbose" } })).to.throw('STINT_LOG_LEVEL must be one of error, warn, info, debug; got "verbose"');
    expect(() => createLogger({ env: { STINT_LOG_FORMAT: "text" } })).to.throw('STINT_LOG_FORMAT must be one of json, pretty; got "text"');
  });

  it("refuses an invalid level option, naming the option", () => {
    expect(() => createLogger({ level: "loud" as never, env: {} })).to.throw("Invalid option `level`");
    expect(() => createLogger({ defaultLevel: "loud" as never, env: {} })).to.throw("Invalid option `defaultLevel`");
  });
});
