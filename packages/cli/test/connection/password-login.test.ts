import { join } from "node:path";
import { tmpdir } from "node:os";
import { expect } from "chai";
import { ThrowawayPostgres } from "@stint/throwaway-postgres";
import { ExitCode } from "../../src/index";
import { stint, type ErrorJson } from "../helpers/run-stint";

const ADVICE = "add it to the URL (postgres://user:PASSWORD@host/database), or set PGPASSWORD, or put it in ~/.pgpass (or the file PGPASSFILE names)";

describe("stint against a server that asks for a password", () => {
  let server: ThrowawayPostgres;
  let url: (credentials: string) => string;
  const saved = { PGPASSWORD: process.env["PGPASSWORD"], PGPASSFILE: process.env["PGPASSFILE"] };

  before(async () => {
    server = await ThrowawayPostgres.start({ passwordAuth: { password: "s3cret" }, settings: { max_connections: 20 } });
    url = (credentials) => `postgres://${credentials}@127.0.0.1:${server.port}/stint`;
    // pg reads these from the process, not from the CLI's environment: no developer's own may answer for the URL.
    Reflect.deleteProperty(process.env, "PGPASSWORD");
    process.env["PGPASSFILE"] = join(tmpdir(), "stint-cli-no-such-pgpass");
  });
  after(async () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) Reflect.deleteProperty(process.env, name);
      else process.env[name] = value;
    }
    await server?.stop();
  });

  it("says that --database-url has no password when the server asks for one (exit 78)", async () => {
    const result = await stint(["status", "--database-url", url("postgres")], { env: {} });
    expect(result.code).to.equal(ExitCode.Config);
    expect(result.stderr).to.equal(`stint: PostgreSQL at 127.0.0.1:${server.port} asked for a password and --database-url has none — ${ADVICE}\n`);
    expect(result.stdout).to.equal("");
  });

  it("names DATABASE_URL when the URL came from there, and prints the same as JSON with STINT_CONFIG", async () => {
    const result = await stint(["status", "--json"], { env: { DATABASE_URL: url("postgres") } });
    expect(result.code).to.equal(ExitCode.Config);
    expect(JSON.parse(result.stderr) as ErrorJson).to.deep.equal({
      error: { code: "STINT_CONFIG", message: `PostgreSQL at 127.0.0.1:${server.port} asked for a password and DATABASE_URL has none — ${ADVICE}` },
    });
  });

  it("keeps the wrong-password message for a URL with a password (exit 78)", async () => {
    const result = await stint(["status", "--database-url", url("postgres:wrong")], { env: {} });
    expect(result.code).to.equal(ExitCode.Config);
    expect(result.stderr).to.equal(
      `stint: PostgreSQL at 127.0.0.1:${server.port} refused the login: password authentication failed for user "postgres" — check the user and password in DATABASE_URL\n`,
    );
    expect(result.stderr).to.not.include("wrong");
  });

  it("connects with the password in the URL", async () => {
    const result = await stint(["migrate", "--database-url", url("postgres:s3cret")], { env: {} });
    expect(result.code, result.stderr).to.equal(ExitCode.Ok);
  });
});
