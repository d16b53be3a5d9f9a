import { expect } from "chai";
import { request } from "node:http";
import { handleStopSignals } from "../../src/runtime/stop-signals";
import { startHealthServer } from "../../src/runtime/health-server";
import { createSilentLogger } from "../../src/logging/create-logger";

function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request({ host: "127.0.0.1", port, path }, (response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => (body += chunk.toString()));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    })
      .on("error", reject)
      .end();
  });
}

describe("handleStopSignals", () => {
  it("stops gracefully on the first signal and forces exit 130 on the second", () => {
    const exits: number[] = [];
    const stop = handleStopSignals(createSilentLogger(), (code) => exits.push(code));
    try {
      process.emit("SIGTERM");
      expect(stop.signal.aborted).to.equal(true);
      expect(exits).to.deep.equal([]);
      process.emit("SIGINT");
      expect(exits).to.deep.equal([130]);
    } finally {
      stop.dispose();
    }
  });
});

describe("startHealthServer", () => {
  it("answers /healthz while alive and /readyz by the readiness check", async () => {
    let ready = true;
    const health = await startHealthServer(
      0,
      {
        ready: async () => {
          if (!ready) throw new Error("database unreachable");
        },
      },
      200,
    );
    try {
      expect(await get(health.port, "/healthz")).to.deep.equal({ status: 200, body: "ok\n" });
      expect((await get(health.port, "/readyz")).status).to.equal(200);
      ready = false;
      expect(await get(health.port, "/readyz")).to.deep.equal({ status: 503, body: "not ready: database unreachable\n" });
      expect((await get(health.port, "/nope")).status).to.equal(404);
    } finally {
      await health.close();
    }
  });

  it("reports not ready when the check does not answer in time", async () => {
    const health = await startHealthServer(0, { ready: () => new Promise(() => undefined) }, 50);
    try {
      expect(await get(health.port, "/readyz")).to.deep.equal({ status: 503, body: "not ready: no answer within 50 ms\n" });
    } finally {
      await health.close();
    }
  });
});
