import { expect } from "chai";
import { LiveLine } from "../../src/output/live-line";
import { CapturedStream } from "../helpers/run-stint";

describe("LiveLine", () => {
  it("redraws its line in place", () => {
    const stream = new CapturedStream(true);
    const line = new LiveLine(stream);
    line.show("1/3 done");
    line.show("2/3 done");
    line.close("3/3 done");
    expect(stream.text).to.equal("\r\x1b[K1/3 done\r\x1b[K2/3 done\r\x1b[K3/3 done\n");
  });

  it("lets other writes scroll above it and draws it again after each finished line", () => {
    const stream = new CapturedStream(true);
    const line = new LiveLine(stream);
    line.show("1/3 done");
    stream.write("worker started\n");
    stream.write("partial ");
    line.show("2/3 done");
    stream.write("line\n");
    line.close();
    expect(stream.text).to.equal("\r\x1b[K1/3 done" + "\r\x1b[Kworker started\n" + "\r\x1b[K1/3 done" + "\r\x1b[Kpartial " + "line\n" + "\r\x1b[K2/3 done\n");
  });

  it("gives the stream its own write back when closed", () => {
    const stream = new CapturedStream(true);
    const line = new LiveLine(stream);
    expect(Object.prototype.hasOwnProperty.call(stream, "write")).to.equal(true);
    line.close();
    expect(Object.prototype.hasOwnProperty.call(stream, "write")).to.equal(false);
    stream.write("after\n");
    expect(stream.text).to.equal("after\n");
  });
});
