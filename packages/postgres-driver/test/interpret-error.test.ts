import { ConfigError, DatabaseError, ErrorCode, InfrastructureError, PermanentError, errorCodeOf } from "@stint/core";
import { expect } from "chai";
import { sql } from "kysely";
import { interpretError, isRetryableSqlState } from "../src/interpret-error";
import { isUniqueViolation } from "../src/interpret-error";
import { createTestSchema, type TestSchema } from "../src/testing";

/** A look-alike of pg's server error: a SQLSTATE `code` and a `severity`. */
function serverError(code: string, message = `server said ${code}`): Error {
  return Object.assign(new Error(message), { code, severity: "ERROR" });
}

describe("interpretError", () => {
  it("turns connection, restart, serialization, deadlock and timeout SQLSTATEs into InfrastructureError", () => {
    for (const code of ["08006", "08P01", "40001", "40P01", "57P01", "57P02", "57P03", "57014", "53300", "53200", "55P03", "25P03", "25006"]) {
      const error = interpretError(serverError(code), "claimBatch");
      expect(error, code).to.be.instanceOf(InfrastructureError);
      expect((error as InfrastructureError).sqlState).to.equal(code);
    }
  });

  it("turns other SQLSTATEs into DatabaseError, keeping the cause", () => {
    for (const code of ["23505", "42P01", "42501", "22P02", "XX000"]) {
      const cause = serverError(code);
      const error = interpretError(cause, "enqueue");
      expect(error, code).to.be.instanceOf(DatabaseError);
      expect(error).to.include({ sqlState: code, cause });
      expect(error.message).to.equal(`enqueue failed: server said ${code}`);
    }
  });

  it("turns a key refused as a group and a serial key at once into a ConfigError naming the option, and other 22023s into DatabaseError", () => {
    const asSerial = serverError("22023", "key 'acme' of queue 'mail' is a group; a job cannot use it as a serial key");
    const serial = interpretError(asSerial, "enqueue");
    expect(serial).to.be.instanceOf(ConfigError);
    expect(serial).to.include({ option: "serialKey", cause: asSerial });
    expect(serial.message).to.equal("Invalid option `serialKey`: key 'acme' of queue 'mail' is a group; a job cannot use it as a serial key");
    const asGroup = interpretError(serverError("22023", "key E'a\\\\b''c' of queue 'mail' is a serial key; a job cannot use it as a group"), "enqueueMany");
    expect(asGroup).to.be.instanceOf(ConfigError).and.include({ option: "group" });
    expect(interpretError(serverError("22023", "priority must be from -32768 to 32767, got 40000"), "enqueue")).to.be.instanceOf(DatabaseError);
    expect(interpretError(serverError("22P02", "key 'acme' of queue 'mail' is a group; a job cannot use it as a serial key"), "enqueue")).to.be.instanceOf(
      DatabaseError,
    );
  });

  it("treats socket errors and pg's connection messages as InfrastructureError", () => {
    const failures: unknown[] = [
      Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }),
      Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }),
      Object.assign(new Error("write EPIPE"), { code: "EPIPE" }),
      Object.assign(new Error("getaddrinfo ENOTFOUND db"), { code: "ENOTFOUND" }),
      Object.assign(new Error("connect ETIMEDOUT"), { code: "ETIMEDOUT" }),
      new Error("Connection terminated unexpectedly"),
      new Error("Connection terminated due to connection timeout"),
      new Error("Client has encountered a connection error and is not queryable"),
      new Error("timeout exceeded when trying to connect"),
      new AggregateError([Object.assign(new Error("connect ECONNREFUSED ::1:5432"), { code: "ECONNREFUSED" })], ""),
      new Error("query failed", { cause: Object.assign(new Error("socket closed"), { code: "ECONNRESET" }) }),
    ];
    for (const failure of failures) {
      const error = interpretError(failure, "getJob");
      expect(error, String(failure)).to.be.instanceOf(InfrastructureError);
      expect(error.message).to.match(/^getJob failed: \S/);
    }
  });

  it("returns errors that already carry a stint code, and unrelated errors, unchanged", () => {
    const permanent = new PermanentError("no");
    expect(interpretError(permanent, "x")).to.equal(permanent);
    const bug = new TypeError("undefined is not a function");
    expect(interpretError(bug, "x")).to.equal(bug);
    expect(interpretError("text", "x").message).to.equal("x failed: text");
  });

  it("does not mistake an error code that is not a SQLSTATE from the server for one", () => {
    expect(interpretError(Object.assign(new Error("odd"), { code: "40001" }), "x")).to.not.be.instanceOf(InfrastructureError);
  });

  it("knows which SQLSTATEs are retryable", () => {
    expect(isRetryableSqlState("08003")).to.equal(true);
    expect(isRetryableSqlState("40001")).to.equal(true);
    expect(isRetryableSqlState("23505")).to.equal(false);
    expect(isUniqueViolation(serverError("23505"))).to.equal(true);
    expect(isUniqueViolation(serverError("23503"))).to.equal(false);
  });

  describe("against a real server", () => {
    let test: TestSchema;

    before(async () => {
      test = await createTestSchema({ maxConnections: 3 });
    });
    after(async () => {
      await test.drop();
    });

    it("classifies a statement timeout as retryable", async () => {
      const thrown = await test.db
        .connection()
        .execute(async (connection) => {
          await sql`SET statement_timeout = 20`.execute(connection);
          try {
            await sql`SELECT pg_sleep(5)`.execute(connection);
          } finally {
            await sql`RESET statement_timeout`.execute(connection);
          }
        })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      const error = interpretError(thrown, "claimBatch");
      expect(errorCodeOf(error)).to.equal(ErrorCode.Infrastructure);
      expect((error as InfrastructureError).sqlState).to.equal("57014");
    });

    it("classifies a terminated backend as retryable", async () => {
      const thrown = await test.db
        .connection()
        .execute(async (connection) => {
          await sql`SELECT pg_terminate_backend(pg_backend_pid())`.execute(connection);
        })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(thrown).to.not.equal(undefined);
      expect(interpretError(thrown, "extendLeases")).to.be.instanceOf(InfrastructureError);
      // The dead connection may be handed out once more before pg notices the
      // closed socket; a retry, as a worker makes after InfrastructureError, gets a new one.
      let ok: number | undefined;
      for (let tries = 0; tries < 3 && ok === undefined; tries += 1) {
        ok = await sql<{ ok: number }>`SELECT 1 AS ok`.execute(test.db).then(
          ({ rows }) => rows[0]?.ok,
          (error: unknown) => {
            expect(interpretError(error, "getJob")).to.be.instanceOf(InfrastructureError);
            return undefined;
          },
        );
      }
      expect(ok, "the pool recovers with a new connection").to.equal(1);
    });

    it("classifies a unique violation as a DatabaseError", async () => {
      const thrown = await sql`INSERT INTO ${sql.id(test.schema, "migrations")} (version, name) VALUES (1, 'again')`.execute(test.db).then(
        () => undefined,
        (error: unknown) => error,
      );
      const error = interpretError(thrown, "enqueue");
      expect(error).to.be.instanceOf(DatabaseError);
      expect((error as DatabaseError).sqlState).to.equal("23505");
    });
  });
});
