import { expect } from "chai";
import { ConfigError, DatabaseError, EnvironmentError, InfrastructureError, MissingPasswordError, PayloadError, SchemaMissingError } from "@stint/core";
import { explainFailure } from "../src/explain-failure";
import { CliErrorCode, ExitCode } from "../src/index";

describe("explainFailure", () => {
  const scene = { schema: "billing", address: "db:5432" };

  it("says a lost or refused connection cannot reach the server (69)", () => {
    const failure = explainFailure(
      new InfrastructureError("connect failed: connect ECONNREFUSED 10.0.0.1:5432", { cause: new Error("connect ECONNREFUSED 10.0.0.1:5432") }),
      scene,
    );
    expect(failure.exitCode).to.equal(ExitCode.Infrastructure);
    expect(failure.message).to.equal(
      "cannot reach PostgreSQL at db:5432 (connect ECONNREFUSED 10.0.0.1:5432) — is the server running, and is DATABASE_URL right?",
    );
  });

  it("reports a retryable server error with its SQLSTATE (69)", () => {
    const failure = explainFailure(new InfrastructureError("countByQueue failed: canceling statement due to statement timeout", { sqlState: "57014" }), scene);
    expect(failure.exitCode).to.equal(ExitCode.Infrastructure);
    expect(failure.message).to.include("(SQLSTATE 57014); try again");
  });

  it("turns a missing table into the migrate hint (78)", () => {
    const failure = explainFailure(new DatabaseError('listJobs failed: relation "billing.jobs" does not exist', { sqlState: "42P01" }), scene);
    expect(failure.exitCode).to.equal(ExitCode.Config);
    expect(failure.message).to.equal('schema "billing" has no stint tables — run `stint migrate --schema billing`');
  });

  it("turns the driver's SchemaMissingError into the migrate hint (78)", () => {
    const error = new SchemaMissingError('claimBatch failed: relation "billing.jobs" does not exist — …', { schema: "billing", sqlState: "42P01" });
    expect(explainFailure(error, scene)).to.include({
      exitCode: ExitCode.Config,
      code: CliErrorCode.Config,
      message: 'schema "billing" has no stint tables — run `stint migrate --schema billing`',
    });
  });

  it("says that the URL has no password when the server asks for one, naming where the URL came from (78)", () => {
    const missing = new MissingPasswordError("connect failed: PostgreSQL asked for a password and the connection settings give none — …");
    expect(explainFailure(missing, { ...scene, url: { source: "--database-url", hasPassword: false } })).to.include({
      exitCode: ExitCode.Config,
      code: CliErrorCode.Config,
      message:
        "PostgreSQL at db:5432 asked for a password and --database-url has none — add it to the URL (postgres://user:PASSWORD@host/database), " +
        "or set PGPASSWORD, or put it in ~/.pgpass (or the file PGPASSFILE names)",
    });
    expect(explainFailure(missing, { ...scene, url: { source: "DATABASE_URL", hasPassword: false } }).message).to.match(/and DATABASE_URL has none — /);
  });

  it("points at the missing password when a URL without one was refused for its password (78)", () => {
    const refused = new DatabaseError('connect failed: password authentication failed for user "app"', {
      sqlState: "28P01",
      cause: new Error('password authentication failed for user "app"'),
    });
    expect(explainFailure(refused, { ...scene, url: { source: "DATABASE_URL", hasPassword: false } }).message).to.equal(
      'PostgreSQL at db:5432 refused the login: password authentication failed for user "app" — DATABASE_URL has no password: ' +
        "add it (postgres://user:PASSWORD@host/database), or check PGPASSWORD and ~/.pgpass",
    );
    expect(explainFailure(refused, { ...scene, url: { source: "DATABASE_URL", hasPassword: true } }).message).to.match(
      / — check the user and password in DATABASE_URL$/,
    );
  });

  it("treats a refused login, a missing database or privilege as configuration (78)", () => {
    for (const sqlState of ["28P01", "28000", "3D000", "42501"]) {
      expect(explainFailure(new DatabaseError("nope", { sqlState }), scene).exitCode, sqlState).to.equal(ExitCode.Config);
    }
  });

  it("passes stint's configuration errors through (78) and payload errors as usage (2)", () => {
    expect(explainFailure(new ConfigError("queue", "bad"), scene)).to.include({ exitCode: ExitCode.Config, message: "Invalid option `queue`: bad" });
    expect(explainFailure(new PayloadError("payload is 2 MB, more than 1 MB"), scene).exitCode).to.equal(ExitCode.Usage);
  });

  it("reports anything else as a failure (1)", () => {
    expect(explainFailure(new DatabaseError("x", { sqlState: "23505" }), scene).exitCode).to.equal(ExitCode.Failure);
    expect(explainFailure(new Error("surprise"), scene)).to.include({ exitCode: ExitCode.Failure, message: "surprise" });
  });

  it("gives every failure the stable code of its exit code", () => {
    expect(explainFailure(new InfrastructureError("connect failed", { cause: new Error("ECONNREFUSED") }), scene).code).to.equal(CliErrorCode.Unreachable);
    expect(explainFailure(new EnvironmentError("STINT_LOG_LEVEL", "must be one of error, warn, info, debug", "loud"), scene)).to.include({
      exitCode: ExitCode.Config,
      code: CliErrorCode.Config,
      message: 'STINT_LOG_LEVEL must be one of error, warn, info, debug; got "loud"',
    });
    expect(explainFailure(new PayloadError("too large"), scene).code).to.equal(CliErrorCode.Usage);
    expect(explainFailure(new Error("surprise"), scene).code).to.equal(CliErrorCode.Failure);
  });

  it("gives a code to a CliError from a copy of the module that had none", () => {
    const old = Object.assign(new Error("job 7 not found"), { name: "CliError", exitCode: ExitCode.NotFound, showUsage: false });
    expect(explainFailure(old, scene)).to.include({ code: "STINT_NOT_FOUND", exitCode: ExitCode.NotFound, message: "job 7 not found" });
  });
});
