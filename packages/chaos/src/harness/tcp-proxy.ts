import { createServer, connect, type AddressInfo, type Server, type Socket } from "node:net";

/** One client connection and its connection to the server. */
interface Link {
  readonly client: Socket;
  readonly server: Socket;
}

/**
 * A TCP proxy on 127.0.0.1 in front of a PostgreSQL server, that can cut
 * the network without closing anything: in **black-hole** mode every
 * socket stays open but no byte moves in either direction (both sides are
 * paused, so data waits unread in the kernel's buffers), and neither a
 * close nor a reset is passed on — each peer sees a half-open connection
 * that simply stops answering, as behind a silently failed switch or a
 * dropped firewall state. New connections are accepted and wait too.
 * {@link forward} lets everything through again, in order, as TCP would
 * after a partition heals.
 *
 * @example
 * ```ts
 * const proxy = await TcpProxy.start(process.env.DATABASE_URL!);
 * // give a worker proxy.connectionString, then:
 * proxy.blackHole();
 * proxy.forward();
 * await proxy.close();
 * ```
 */
export class TcpProxy {
  readonly #server: Server;
  readonly #target: { readonly host: string; readonly port: number };
  readonly #through: URL;
  readonly #links = new Set<Link>();
  /** What a close or reset seen during a black hole would have passed on: done when it lifts. */
  #pendingEnds: (() => void)[] = [];
  #blackHoled = false;
  /** Connections accepted so far. */
  accepted = 0;

  private constructor(server: Server, target: URL) {
    this.#server = server;
    this.#target = { host: target.hostname || "127.0.0.1", port: Number(target.port || 5432) };
    this.#through = new URL(target.href);
    this.#through.hostname = "127.0.0.1";
    this.#through.port = String((server.address() as AddressInfo).port);
  }

  /** Starts a proxy on a free port of 127.0.0.1 forwarding to the host and port of `connectionString`. */
  static async start(connectionString: string): Promise<TcpProxy> {
    const target = new URL(connectionString);
    const server = createServer({ pauseOnConnect: true, allowHalfOpen: true });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    const proxy = new TcpProxy(server, target);
    server.on("connection", (client) => proxy.#accept(client));
    return proxy;
  }

  /** `connectionString` with the proxy's host and port instead of the server's. */
  get connectionString(): string {
    return this.#through.href;
  }

  get blackHoled(): boolean {
    return this.#blackHoled;
  }

  /** Connections open through the proxy now. */
  get open(): number {
    return this.#links.size;
  }

  /** Stops every byte in both directions, keeping every socket open. */
  blackHole(): void {
    this.#blackHoled = true;
    for (const { client, server } of this.#links) {
      client.pause();
      server.pause();
    }
  }

  /** Lets everything through again: data held up meanwhile, then the closes it held back. */
  forward(): void {
    this.#blackHoled = false;
    for (const { client, server } of this.#links) {
      client.resume();
      server.resume();
    }
    const ends = this.#pendingEnds;
    this.#pendingEnds = [];
    for (const end of ends) end();
  }

  /** Closes the listener and destroys every connection through it. */
  async close(): Promise<void> {
    for (const { client, server } of this.#links) {
      client.destroy();
      server.destroy();
    }
    this.#links.clear();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #accept(client: Socket): void {
    this.accepted += 1;
    const server = connect({ host: this.#target.host, port: this.#target.port, allowHalfOpen: true });
    server.pause();
    const link: Link = { client, server };
    this.#links.add(link);
    this.#pipe(client, server);
    this.#pipe(server, client);
    const drop = (): void => {
      this.#links.delete(link);
      client.destroy();
      server.destroy();
    };
    for (const socket of [client, server]) {
      socket.on("error", () => this.#unlessBlackHoled(drop));
      socket.on("close", () => this.#unlessBlackHoled(drop));
    }
    if (!this.#blackHoled) {
      client.resume();
      server.resume();
    }
  }

  /** Copies `from` to `to`, with back-pressure; an end is passed on unless the network is cut. */
  #pipe(from: Socket, to: Socket): void {
    from.on("data", (chunk: Buffer) => {
      if (!to.write(chunk)) from.pause();
    });
    to.on("drain", () => {
      if (!this.#blackHoled) from.resume();
    });
    from.on("end", () => this.#unlessBlackHoled(() => to.end()));
  }

  #unlessBlackHoled(action: () => void): void {
    if (this.#blackHoled) this.#pendingEnds.push(action);
    else action();
  }
}
