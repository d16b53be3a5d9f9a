import { expect } from "chai";
import { defineJob } from "@stint/core";
import { buildNewJob } from "@stint/core/driver";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { Echo } from "../fixtures/test-app";
import { stint, type StintResult } from "../helpers/run-stint";
import { useSchemaAndDir } from "../helpers/schema-and-dir";
import { eventually } from "@stint/core/testing";
import { CapturedStream } from "../helpers/run-stint";
import { runCli } from "../../src/index";

const APP = join(__dirname, "..", "fixtures", "test-app.js");
const TOKEN = "cli-dashboard-token-0123456789";

describe("stint dashboard", () => {
  const scene = useSchemaAndDir();

  function refused(result: StintResult, message: RegExp): void {
    expect(result.code, result.stderr).to.equal(78);
    expect(result.stderr).to.match(message);
  }

  it("refuses to start without a credential, naming the ways to give one", async () => {
    refused(await stint(["dashboard", "--schema", scene.test.schema]), /needs a credential: set \$STINT_DASHBOARD_TOKEN .*--no-auth on 127\.0\.0\.1/);
  });

  it("refuses --no-auth on an address other machines can reach", async () => {
    refused(await stint(["dashboard", "--no-auth", "--host", "0.0.0.0", "--schema", scene.test.schema]), /--no-auth .* only on a loopback address/);
  });

  it("refuses a short token, two credentials, and a bad port", async () => {
    const env = { DATABASE_URL: process.env["DATABASE_URL"], STINT_DASHBOARD_TOKEN: "short" };
    refused(await stint(["dashboard", "--schema", scene.test.schema], { env }), /at least 16 characters/);
    refused(await stint(["dashboard", "--token", TOKEN, "--basic-auth", "a:bcdefghij", "--schema", scene.test.schema]), /give one credential/);
    refused(await stint(["dashboard", "--token", TOKEN, "--port", "70000", "--schema", scene.test.schema]), /--port must be an integer from 0 to 65535/);
    refused(
      await stint(["dashboard", "--no-auth", "--allowed-hosts", "stint.test,https://evil.example", "--schema", scene.test.schema]),
      /--allowed-hosts .* got "https:\/\/evil\.example"/,
    );
  });

  it("without auth, answers requests naming a loopback host or an allowed one, and refuses a rebound name with 421", async () => {
    const stdout = new CapturedStream();
    const stop = new AbortController();
    const running = runCli(["dashboard", "--no-auth", "--port", "0", "--schema", scene.test.schema], {
      stdout,
      stderr: new CapturedStream(),
      env: { DATABASE_URL: process.env["DATABASE_URL"], STINT_DASHBOARD_ALLOWED_HOSTS: "stint.test" },
      signal: stop.signal,
    });
    try {
      const port = Number(
        await eventually(() => /on http:\/\/127\.0\.0\.1:(\d+)\//.exec(stdout.text)?.[1], { timeoutMs: 20_000, what: "the dashboard's address" }),
      );
      expect(stdout.text).to.contain("hosts stint.test");
      const statusFor = (host: string) =>
        new Promise<number>((resolve, reject) =>
          httpRequest({ host: "127.0.0.1", port, path: "/", headers: { host } }, (response) => (response.resume(), resolve(response.statusCode!)))
            .on("error", reject)
            .end(),
        );
      expect(await statusFor(`rebind.evil.example:${port}`)).to.equal(421);
      expect(await statusFor(`localhost:${port}`)).to.equal(200);
      expect(await statusFor(`stint.test:${port}`)).to.equal(200);
    } finally {
      stop.abort();
    }
    expect(await running).to.equal(0);
  });

  it("serves the dashboard with the token from the environment until interrupted, redacting the app's secret fields", async () => {
    const { store } = scene.test;
    const { id } = await store.enqueue(buildNewJob(Echo, { text: "hello", apiKey: "sk_live_abcdef" }));
    const { id: otherId } = await store.enqueue(buildNewJob(defineJob<{ card: string }>("not-in-app"), { card: "4242" }));
    const stdout = new CapturedStream();
    const stderr = new CapturedStream();
    const stop = new AbortController();
    const running = runCli(["dashboard", "--port", "0", "--app", APP, "--schema", scene.test.schema], {
      stdout,
      stderr,
      env: { DATABASE_URL: process.env["DATABASE_URL"], STINT_DASHBOARD_TOKEN: TOKEN },
      signal: stop.signal,
    });
    try {
      const url = await eventually(() => /on (http:\/\/127\.0\.0\.1:\d+\/) /.exec(stdout.text)?.[1], { timeoutMs: 20_000, what: "the dashboard's address" });
      expect(stdout.text).to.contain(`(schema "${scene.test.schema}", token; sign in with the token)`);
      expect((await fetch(url)).status).to.equal(401);
      const headers = { authorization: `Bearer ${TOKEN}` };
      const overview = await fetch(url, { headers });
      expect(overview.status).to.equal(200);
      expect(await overview.text()).to.contain('data-queue="cli-echo"');
      const job = await (await fetch(`${url}jobs/${id}`, { headers })).text();
      expect(job).to.contain("[redacted]").and.contain("hello").and.not.contain("sk_live_abcdef");
      const other = await (await fetch(`${url}jobs/${otherId}`, { headers })).text();
      expect(other).to.contain("data-payload-hidden").and.not.contain("4242");

      // Live updates: the command gives the dashboard the job events of every process.
      const streaming = new AbortController();
      const stream = await fetch(`${url}events`, { headers, signal: streaming.signal });
      expect(stream.headers.get("content-type")).to.match(/^text\/event-stream/);
      const reader: ReadableStreamDefaultReader<Uint8Array> = stream.body!.getReader();
      let received = "";
      const readUntil = async (pattern: RegExp): Promise<void> => {
        while (!pattern.test(received)) {
          const { value, done } = await reader.read();
          if (done) throw new Error(`the event stream ended before ${String(pattern)}: ${received}`);
          received += new TextDecoder().decode(value);
        }
      };
      await readUntil(/event: ready/);
      const { id: later } = await store.enqueue(buildNewJob(Echo, { text: "live", apiKey: "sk_live_later" }));
      await readUntil(new RegExp(`"type":"enqueued","jobId":"${later}"`));
      streaming.abort();
    } finally {
      stop.abort();
    }
    expect(await running).to.equal(0);
  });
});
