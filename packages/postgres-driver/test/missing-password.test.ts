import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { ThrowawayPostgres } from "@stint/throwaway-postgres";
import { createSilentLogger, DatabaseError, ErrorCode, errorCodeOf, ExitCode, MissingPasswordError, runWorkers } from "@stint/core";
import { createDatabase, PostgresJobStore } from "../src";
import { ScriptedWorker } from "./worker-lifecycle/scripted-worker";

/** The first error a `getJob` through a new pool on `connectionString` rejects with, or `undefined` when it connects. */
async function firstCallError(connectionString: string): Promise<Error | undefined> {
  const database = createDatabase({ connectionString, maxConnections: 1 });
  try {
    const store = new PostgresJobStore({ db: database.db, schema: "stint_password_test" });
    return await store.getJob({ id: "1" }).then(
      () => undefined,
      (thrown: unknown) => thrown as Error,
    );
  } finally {
    await database.close();
  }
}

/** Runs `work` with the environment variables set (or removed, for `undefined`), then puts them back. */
async function withEnv<T>(variables: Record<string, string | undefined>, work: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(variables).map((name) => [name, process.env[name]]));
  const apply = (values: Record<string, string | undefined>): void => {
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined) Reflect.deleteProperty(process.env, name);
      else process.env[name] = value;
    }
  };
  apply(variables);
  try {
    return await work();
  } finally {
    apply(before);
  }
}

describe("a server that asks for a password", () => {
  let server: ThrowawayPostgres;
  let dir: string;
  /** The server's URL with the user's password left out. */
  let noPassword: (user?: string) => string;

  before(async () => {
    // md5 in pg_hba.conf: SCRAM for a password stored as SCRAM (postgres), MD5 for one stored as MD5 (below).
    server = await ThrowawayPostgres.start({ passwordAuth: { password: "s3cret", method: "md5" }, settings: { max_connections: 20 } });
    dir = mkdtempSync(join(tmpdir(), "stint-pgpass-"));
    noPassword = (user = "postgres") => `postgres://${user}@127.0.0.1:${server.port}/stint`;
    const admin = createDatabase({ connectionString: server.connectionString, maxConnections: 1 });
    try {
      // initdb stores the first password by the method it was given: store it again as SCRAM.
      await admin.pool.query("SET password_encryption = 'scram-sha-256'");
      await admin.pool.query("ALTER ROLE postgres PASSWORD 's3cret'");
      await admin.pool.query("SET password_encryption = 'md5'");
      await admin.pool.query("CREATE ROLE stint_md5_user LOGIN PASSWORD 'md5-secret'");
    } finally {
      await admin.close();
    }
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await server.stop();
  });

  // Each test runs with neither variable set, so a developer's own cannot answer for the URL.
  const noPasswordFromEnv = { PGPASSWORD: undefined, PGPASSFILE: join(tmpdir(), "stint-no-such-pgpass") };

  it("turns a SCRAM login without a password into a MissingPasswordError (STINT_CONFIG), not a retryable error", async () => {
    const error = await withEnv(noPasswordFromEnv, () => firstCallError(noPassword()));
    expect(error).to.be.instanceOf(MissingPasswordError);
    expect(errorCodeOf(error)).to.equal(ErrorCode.Config);
    expect(error?.message).to.equal(
      "getJob failed: PostgreSQL asked for a password and the connection settings give none — put it in the connection string " +
        "(postgres://user:password@host:5432/database), set PGPASSWORD, or add a line for it to the password file (~/.pgpass, or the file PGPASSFILE names)",
    );
    expect((error?.cause as Error).message).to.equal("SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string");
  });

  it("stops a run of workers at once with exit code 78 instead of retrying the claim", async () => {
    const database = createDatabase({ connectionString: noPassword(), maxConnections: 1 });
    try {
      const store = new PostgresJobStore({ db: database.db, schema: "stint_password_test" });
      const worker = new ScriptedWorker(store, { process: () => Promise.resolve() });
      const report = await withEnv(noPasswordFromEnv, () => runWorkers({ workers: [worker], mode: "loop", store, log: createSilentLogger() }));
      expect(report).to.include({ exitCode: ExitCode.Config, stoppedBecause: "config" });
      expect(report.workers[0]?.error).to.match(/^claimBatch failed: PostgreSQL asked for a password and the connection settings give none/);
    } finally {
      await database.close();
    }
  });

  it("treats an empty password in the URL the same way", async () => {
    const url = noPassword().replace("postgres@", "postgres:@");
    expect(errorCodeOf(await withEnv(noPasswordFromEnv, () => firstCallError(url)))).to.equal(ErrorCode.Config);
  });

  it("logs in with the password from PGPASSWORD or the password file, as the message says", async () => {
    expect(await withEnv({ ...noPasswordFromEnv, PGPASSWORD: "s3cret" }, () => firstCallError(noPassword()))).to.include({
      code: ErrorCode.SchemaMissing,
    });
    const file = join(dir, "pgpass");
    writeFileSync(file, `127.0.0.1:${server.port}:stint:postgres:s3cret\n`, { mode: 0o600 });
    expect(await withEnv({ PGPASSWORD: undefined, PGPASSFILE: file }, () => firstCallError(noPassword()))).to.include({
      code: ErrorCode.SchemaMissing,
    });
  });

  it("cannot tell a missing MD5 password from a wrong one: the server refuses the login (28P01)", async () => {
    const error = await withEnv(noPasswordFromEnv, () => firstCallError(noPassword("stint_md5_user")));
    expect(error).to.be.instanceOf(DatabaseError);
    expect(error).to.include({ sqlState: "28P01" });
  });

  it("reports a wrong SCRAM password as the server's refusal (28P01)", async () => {
    const wrong = noPassword().replace("postgres@", "postgres:wrong@");
    expect(await withEnv(noPasswordFromEnv, () => firstCallError(wrong))).to.include({ code: ErrorCode.Database, sqlState: "28P01" });
  });
});
