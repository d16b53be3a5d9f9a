import { eventually } from "@stint/core/testing";
import { expect } from "chai";
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { TcpProxy } from "../../src/harness/tcp-proxy";

/** Resolves with what `socket` has received once it holds `text`, or rejects after `ms`. */
function received(socket: Socket, text: string, ms = 2_000): Promise<string> {
  let got = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`got ${JSON.stringify(got)} instead of ${JSON.stringify(text)} within ${ms} ms`)), ms);
    socket.on("data", (chunk: Buffer) => {
      got += chunk.toString();
      if (got.includes(text)) {
        clearTimeout(timer);
        resolve(got);
      }
    });
  });
}

describe("TcpProxy", () => {
  let echo: Server;
  let proxy: TcpProxy;
  let client: Socket;
  /** Whether the echo server saw its client end or close. */
  let serverSawEnd: boolean;

  beforeEach(async () => {
    serverSawEnd = false;
    echo = createServer({ allowHalfOpen: true }, (socket) => {
      socket.on("data", (chunk) => socket.write(chunk));
      socket.on("end", () => {
        serverSawEnd = true;
        socket.end();
      });
      socket.on("close", () => (serverSawEnd = true));
    });
    await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
    proxy = await TcpProxy.start(`postgres://user@127.0.0.1:${(echo.address() as AddressInfo).port}/db`);
    const url = new URL(proxy.connectionString);
    client = connect({ host: url.hostname, port: Number(url.port), allowHalfOpen: true });
    await new Promise<void>((resolve) => client.once("connect", resolve));
  });

  afterEach(async () => {
    client.destroy();
    await proxy.close();
    await new Promise<void>((resolve) => echo.close(() => resolve()));
  });

  it("gives a connection string with its own port and the rest of the original", () => {
    const url = new URL(proxy.connectionString);
    expect(url.hostname).to.equal("127.0.0.1");
    expect(url.port).to.not.equal(String((echo.address() as AddressInfo).port));
    expect(url.username).to.equal("user");
    expect(url.pathname).to.equal("/db");
  });

  it("forwards both ways", async () => {
    const answer = received(client, "ping");
    client.write("ping");
    expect(await answer).to.equal("ping");
  });

  it("in a black hole moves no byte and passes on no end, then delivers everything in order when it forwards again", async () => {
    const first = received(client, "one");
    client.write("one");
    await first;
    proxy.blackHole();
    const held = received(client, "twothree", 500);
    client.write("two");
    client.write("three");
    client.end();
    const silent = await held.then(
      () => false,
      () => true,
    );
    expect(silent, "nothing came back through the black hole").to.equal(true);
    expect(serverSawEnd, "the server saw no end through the black hole").to.equal(false);
    expect(proxy.open).to.equal(1);
    const later = received(client, "twothree");
    proxy.forward();
    await later;
    await eventually(() => serverSawEnd, { timeoutMs: 2_000, intervalMs: 10, what: "the held-back end to arrive once it forwards" });
  });
});
