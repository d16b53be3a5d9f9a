import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, chmodSync, constants, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { freePort } from "./free-port";
import { serverUser } from "./server-user";
import { StartFailure } from "./start-failure";

/** How PgBouncer hands server connections to its clients. */
export type PoolMode = "session" | "transaction" | "statement";

/** Options of {@link ThrowawayPgBouncer.start}. */
export interface ThrowawayPgBouncerOptions {
  /** The PostgreSQL it pools, as `postgres://user:password@host:port/database`; its clients use the same user, password and database. */
  readonly upstream: string;
  /** Default `"transaction"`: what managed PostgreSQL offerings hand out. */
  readonly poolMode?: PoolMode;
  /** Server connections per user and database. Default 20. */
  readonly poolSize?: number;
  /** Startup parameters it lets through (ignoring them) instead of refusing the connection. Default none, as PgBouncer's own default. */
  readonly ignoreStartupParameters?: readonly string[];
  /** The `pgbouncer` binary. Default `$PGBOUNCER`, else `pgbouncer` from /usr/sbin, /usr/bin or the PATH. */
  readonly binary?: string;
  /** How long to wait for it to listen, in ms. Default 15 000. */
  readonly startTimeoutMs?: number;
}

const SEARCHED = ["/usr/sbin", "/usr/bin", "/usr/local/bin", "/usr/local/sbin"];

/**
 * A PgBouncer started for a test on a free port of 127.0.0.1, in front of
 * a PostgreSQL the test already has, from the `pgbouncer` binary of the
 * machine (Debian's package `pgbouncer`; CI installs it). Its clients
 * authenticate as they would to the server (`auth_type = trust`, the
 * upstream's password in its user list so that it can log in there). It
 * runs in the foreground as a child process (as the `postgres` user when
 * run as root, since PgBouncer refuses root) and `stop()` ends it at once
 * and removes its folder. A missing binary is a `StartFailure` that says
 * how to get it.
 *
 * @example
 * const bouncer = await ThrowawayPgBouncer.start({ upstream: process.env.DATABASE_URL! });
 * await useDatabase(bouncer.connectionString); // postgres://postgres:postgres@127.0.0.1:41874/stint, transaction pooling
 * await bouncer.stop();
 */
export class ThrowawayPgBouncer {
  readonly #child: ChildProcess;
  readonly #root: string;
  readonly #connectionString: string;
  readonly #port: number;
  readonly #exited: Promise<void>;
  #stopping: Promise<void> | undefined;

  private constructor(child: ChildProcess, root: string, connectionString: string, port: number, exited: Promise<void>) {
    this.#child = child;
    this.#root = root;
    this.#connectionString = connectionString;
    this.#port = port;
    this.#exited = exited;
  }

  /** The upstream's connection string with this pooler's host and port. */
  get connectionString(): string {
    return this.#connectionString;
  }

  get port(): number {
    return this.#port;
  }

  /** Starts one and resolves once it accepts connections. */
  static async start(options: ThrowawayPgBouncerOptions): Promise<ThrowawayPgBouncer> {
    const binary = findBinary(options.binary);
    const upstream = new URL(options.upstream);
    const port = await freePort();
    const root = mkdtempSync(join(tmpdir(), "stint-pgbouncer-"));
    const user = serverUser();
    chmodSync(root, 0o755);
    const userName = decodeURIComponent(upstream.username || "postgres");
    const password = decodeURIComponent(upstream.password);
    writeFileSync(join(root, "userlist.txt"), `${quoted(userName)} ${quoted(password)}\n`, { mode: 0o644 });
    writeFileSync(join(root, "pgbouncer.ini"), config(options, upstream, port, root), { mode: 0o644 });
    const output: string[] = [];
    const child = spawn(binary, [...(user === undefined ? [] : ["-u", user.name]), join(root, "pgbouncer.ini")], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const remember = (chunk: Buffer): void => {
      output.push(
        ...chunk
          .toString("utf8")
          .split("\n")
          .filter((line) => line.trim() !== ""),
      );
      output.splice(0, Math.max(0, output.length - 50));
    };
    child.stdout?.on("data", remember);
    child.stderr?.on("data", remember);
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    const spawnFailed = new Promise<Error>((resolve) => child.once("error", resolve));
    const killOnExit = (): void => void child.kill("SIGKILL");
    process.once("exit", killOnExit);
    void exited.then(() => process.removeListener("exit", killOnExit));
    const url = new URL(options.upstream);
    url.hostname = "127.0.0.1";
    url.port = String(port);
    const bouncer = new ThrowawayPgBouncer(child, root, url.toString(), port, exited);
    const failure = await Promise.race([
      listening(port, options.startTimeoutMs ?? 15_000).then(() => undefined),
      exited.then(() => new Error(`pgbouncer exited at start: ${output.find((line) => /FATAL|ERROR/.test(line)) ?? output.at(-1) ?? "no output"}`)),
      spawnFailed,
    ]).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
    if (failure !== undefined) {
      await bouncer.stop();
      throw new StartFailure(`could not start pgbouncer: ${failure.message}`, { cause: failure });
    }
    return bouncer;
  }

  /** Ends it at once (SIGTERM: immediate shutdown, clients cut off) and removes its folder. Idempotent. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      if (this.#child.exitCode === null && this.#child.signalCode === null) {
        this.#child.kill("SIGTERM");
        const timer = setTimeout(() => this.#child.kill("SIGKILL"), 5_000);
        await this.#exited;
        clearTimeout(timer);
      }
      rmSync(this.#root, { recursive: true, force: true });
    })();
    return this.#stopping;
  }
}

function config(options: ThrowawayPgBouncerOptions, upstream: URL, port: number, root: string): string {
  const ignored = options.ignoreStartupParameters ?? [];
  return [
    "[databases]",
    `* = host=${upstream.hostname} port=${upstream.port || "5432"}`,
    "[pgbouncer]",
    "listen_addr = 127.0.0.1",
    `listen_port = ${port}`,
    "unix_socket_dir =",
    "auth_type = trust",
    `auth_file = ${join(root, "userlist.txt")}`,
    `pool_mode = ${options.poolMode ?? "transaction"}`,
    `default_pool_size = ${options.poolSize ?? 20}`,
    "max_client_conn = 2000",
    ...(ignored.length === 0 ? [] : [`ignore_startup_parameters = ${ignored.join(",")}`]),
    "log_connections = 0",
    "log_disconnections = 0",
    "",
  ].join("\n");
}

/** The binary to run, or a `StartFailure` that says how to install it. */
function findBinary(given: string | undefined): string {
  const candidates =
    given !== undefined
      ? [given]
      : process.env["PGBOUNCER"]
        ? [process.env["PGBOUNCER"]]
        : [...SEARCHED, ...(process.env["PATH"] ?? "").split(delimiter).filter((dir) => dir !== "")].map((dir) => join(dir, "pgbouncer"));
  const found = candidates.find((path) => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
  if (found === undefined) {
    throw new StartFailure(
      `no pgbouncer binary (looked for ${given ?? process.env["PGBOUNCER"] ?? "pgbouncer in /usr/sbin, /usr/bin and the PATH"}): ` +
        "install it (Debian: apt-get install pgbouncer) or set PGBOUNCER to its path",
    );
  }
  return found;
}

/** Resolves once something accepts TCP connections on 127.0.0.1:`port`; rejects after `timeoutMs`. */
async function listening(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await accepts(port)) return;
    if (Date.now() > deadline) throw new Error(`nothing listened on 127.0.0.1:${port} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

function quoted(value: string): string {
  return `"${value.replace(/"/g, '""')}"`;
}
