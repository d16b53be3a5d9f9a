import { createServer, connect, type Server, type Socket } from "node:net";

/** A TCP proxy in front of PostgreSQL whose open connections can be frozen, as when a network path dies without a reset. */
export interface FreezableProxy {
  /** `connectionString` with host and port replaced by the proxy's. */
  readonly connectionString: string;
  /** Stops forwarding on every open connection (data, FIN) without closing it; new connections still work. */
  freeze(): void;
  /** Destroys the frozen connections (the server then sees its clients go away). */
  cut(): void;
  close(): Promise<void>;
}

/**
 * Starts a proxy on 127.0.0.1 to the host and port of `connectionString`.
 *
 * @example
 * ```ts
 * const proxy = await startFreezableProxy(test.connectionString);
 * const lock = new PostgresLeaderLock({ connectionString: proxy.connectionString });
 * proxy.freeze(); // the lock's connection now hangs silently
 * ```
 */
export async function startFreezableProxy(connectionString: string): Promise<FreezableProxy> {
  const target = new URL(connectionString);
  const pairs = new Set<{ client: Socket; upstream: Socket; frozen: boolean }>();
  // Half-open allowed: a frozen connection must not answer a FIN either, as a dead network path would not.
  const server: Server = createServer({ allowHalfOpen: true }, (client) => {
    const upstream = connect({ port: Number(target.port || 5432), host: target.hostname, allowHalfOpen: true });
    const pair = { client, upstream, frozen: false };
    pairs.add(pair);
    client.on("data", (chunk) => pair.frozen || upstream.write(chunk));
    upstream.on("data", (chunk) => pair.frozen || client.write(chunk));
    client.on("end", () => pair.frozen || upstream.end());
    upstream.on("end", () => pair.frozen || client.end());
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on("close", () => pair.frozen || end());
    upstream.on("close", () => pair.frozen || end());
    client.on("error", () => undefined);
    upstream.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the proxy has no port");
  const proxied = new URL(connectionString);
  proxied.hostname = "127.0.0.1";
  proxied.port = String(address.port);
  const destroy = (which: "frozen" | "all") => {
    for (const pair of [...pairs]) {
      if (which === "frozen" && !pair.frozen) continue;
      pairs.delete(pair);
      pair.client.destroy();
      pair.upstream.destroy();
    }
  };
  return {
    connectionString: proxied.toString(),
    freeze: () => pairs.forEach((pair) => (pair.frozen = true)),
    cut: () => destroy("frozen"),
    close: async () => {
      destroy("all");
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
