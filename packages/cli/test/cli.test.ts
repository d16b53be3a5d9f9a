import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { sql } from "kysely";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { COMMANDS } from "../src/cli";
import { ExitCode } from "../src/index";
import { databaseUrl, stint, type ErrorJson } from "./helpers/run-stint";

describe("stint (command line)", () => {
  describe("help and usage", () => {
    it("lists every command on --help and exits 0", async () => {
      const result = await stint(["--help"]);
      expect(result.code).to.equal(ExitCode.Ok);
      for (const name of ["migrate", "enqueue", "status", "jobs list", "jobs show", "retry", "cancel", "prune", "schedules list", "doctor", "run"]) {
        expect(result.stdout).to.include(`  ${name} `);
      }
      expect(result.stdout).to.include("Exit codes: 0 ok, 1 failure, 2 usage error, 3 not found, 4 wrong state,");
      expect(result.stdout).to.include("STINT_LOG_LEVEL").and.include("STINT_LOG_FORMAT");
    });

    it("prints its version from its package.json on --version or -V and exits 0", async () => {
      const { version } = JSON.parse(readFileSync(join(__dirname, "..", "..", "package.json"), "utf8")) as { version: string };
      expect(version).to.match(/^\d+\.\d+\.\d+/);
      for (const args of [["--version"], ["-V"], ["status", "--version"]]) {
        const result = await stint(args);
        expect(result.code, args.join(" ")).to.equal(ExitCode.Ok);
        expect(result.stdout, args.join(" ")).to.equal(`${version}\n`);
        expect(result.stderr).to.equal("");
      }
      expect((await stint(["--version", "--json"])).json()).to.deep.equal({ version });
    });

    it("prints a command's help with its options", async () => {
      const result = await stint(["jobs", "list", "--help"]);
      expect(result.code).to.equal(ExitCode.Ok);
      expect(result.stdout).to.match(/^Usage: stint jobs list /);
      expect(result.stdout).to.include("--before-id ID");
      expect(result.stdout).to.include("--json");
      expect((await stint(["help", "prune"])).stdout).to.match(/^Usage: stint prune /);
    });

    it("lists a group's subcommands", async () => {
      const result = await stint(["jobs", "--help"]);
      expect(result.code).to.equal(ExitCode.Ok);
      expect(result.stdout).to.include("jobs list").and.include("jobs show");
    });

    it("exits 2 with the overview when no command is given", async () => {
      const result = await stint([]);
      expect(result.code).to.equal(ExitCode.Usage);
      expect(result.stderr).to.include("Usage: stint <command>");
    });

    it("exits 2 on an unknown command", async () => {
      const result = await stint(["stauts"]);
      expect(result.code).to.equal(ExitCode.Usage);
      expect(result.stderr).to.include('stint: unknown command "stauts"');
      expect(result.stderr).to.include("Run `stint --help`");
    });

    it("exits 2 on an unknown subcommand or a missing one", async () => {
      expect((await stint(["jobs", "delete"])).stderr).to.include('jobs: unknown subcommand "delete"');
      const missing = await stint(["schedules"]);
      expect(missing.code).to.equal(ExitCode.Usage);
      expect(missing.stderr).to.include("schedules: missing subcommand (stint schedules list, stint schedules add, stint schedules remove)");
    });

    it("exits 2 with the command's usage on an unknown option", async () => {
      const result = await stint(["status", "--verbose"]);
      expect(result.code).to.equal(ExitCode.Usage);
      expect(result.stderr).to.include("stint: unknown option --verbose");
      expect(result.stderr).to.include("Usage: stint status");
    });

    it("exits 2 when an option lacks its value or an argument is missing or extra", async () => {
      expect((await stint(["jobs", "list", "--limit"])).code).to.equal(ExitCode.Usage);
      expect((await stint(["jobs", "show"])).stderr).to.include("jobs show: missing argument");
      expect((await stint(["retry", "1", "2"])).stderr).to.include('retry: unexpected argument "2"');
    });

    it("accepts --json on every command, run included", async () => {
      for (const command of COMMANDS) {
        const result = await stint([...command.name.split(" "), "--json", "--help"]);
        expect(result.code, command.name).to.equal(ExitCode.Ok);
        expect(result.stdout, command.name).to.include("--json");
      }
      const run = await stint(["run", "q", "--json"], { env: {} });
      expect(run.code).to.equal(ExitCode.Config);
      expect((JSON.parse(run.stderr) as ErrorJson).error.code).to.equal("STINT_CONFIG");
    });
  });

  describe("failures as JSON (--json)", () => {
    const failure = (stderr: string): { code: string; message: string } => {
      const document = JSON.parse(stderr) as { error: { code: string; message: string } };
      expect(Object.keys(document)).to.deep.equal(["error"]);
      expect(Object.keys(document.error)).to.deep.equal(["code", "message"]);
      return document.error;
    };

    it("prints an unknown command or option as a usage error document (exit 2)", async () => {
      const command = await stint(["stauts", "--json"]);
      expect(command.code).to.equal(ExitCode.Usage);
      expect(failure(command.stderr)).to.deep.equal({ code: "STINT_USAGE", message: 'unknown command "stauts"' });
      const option = await stint(["status", "--verbose", "--json"]);
      expect(option.code).to.equal(ExitCode.Usage);
      expect(failure(option.stderr)).to.deep.equal({ code: "STINT_USAGE", message: "unknown option --verbose" });
      const argument = await stint(["--json", "jobs", "show"]);
      expect(argument.code).to.equal(ExitCode.Usage);
      expect(failure(argument.stderr)).to.deep.equal({ code: "STINT_USAGE", message: "jobs show: missing argument" });
      expect(argument.stdout).to.equal("");
    });

    it("prints a configuration error as a document (exit 78)", async () => {
      const url = await stint(["status", "--database-url", "not-a-url", "--json"]);
      expect(url.code).to.equal(ExitCode.Config);
      const error = failure(url.stderr);
      expect(error.code).to.equal("STINT_CONFIG");
      expect(error.message).to.match(/^DATABASE_URL is not a valid PostgreSQL URL/);
      const limit = await stint(["jobs", "list", "--limit", "many", "--json"]);
      expect(failure(limit.stderr)).to.deep.equal({ code: "STINT_CONFIG", message: '--limit must be an integer from 1 to 10000, got "many"' });
    });

    it("prints an unreachable database as a document (exit 69)", async () => {
      const result = await stint(["status", "--database-url", "postgres://postgres@127.0.0.1:1/postgres", "--json"]);
      expect(result.code).to.equal(ExitCode.Infrastructure);
      const error = failure(result.stderr);
      expect(error.code).to.equal("STINT_UNREACHABLE");
      expect(error.message).to.match(/^cannot reach PostgreSQL at 127\.0\.0\.1:1/);
    });

    it("leaves an argument `--json` after `--` alone", async () => {
      const result = await stint(["stauts", "--", "--json"]);
      expect(result.code).to.equal(ExitCode.Usage);
      expect(result.stderr).to.match(/^stint: unknown command "stauts"\n/);
    });
  });

  describe("configuration errors", () => {
    it("explains a malformed database URL (exit 78)", async () => {
      const result = await stint(["status", "--database-url", "not-a-url"]);
      expect(result.code).to.equal(ExitCode.Config);
      expect(result.stderr).to.match(/^stint: DATABASE_URL is not a valid PostgreSQL URL \(given by --database-url\): "not-a-url"/);
    });

    it("explains how to set the URL when there is none (exit 78)", async () => {
      const result = await stint(["status"], { env: {} });
      expect(result.code).to.equal(ExitCode.Config);
      expect(result.stderr).to.include("no database given: set DATABASE_URL");
      expect(result.stderr).to.include("or pass --database-url");
    });

    it("refuses an invalid schema name before connecting (exit 78)", async () => {
      const result = await stint(["status", "--schema", 'Bad"Name'], { env: {} });
      expect(result.code).to.equal(ExitCode.Config);
      expect(result.stderr).to.include('invalid schema name "Bad\\"Name"');
    });

    it("names the option whose value is bad (exit 78)", async () => {
      const result = await stint(["jobs", "list", "--limit", "many"]);
      expect(result.code).to.equal(ExitCode.Config);
      expect(result.stderr).to.include('stint: --limit must be an integer from 1 to 10000, got "many"');
      expect((await stint(["status", "--connect-timeout", "soon"])).stderr).to.include("--connect-timeout must be a duration");
    });
  });

  describe("against PostgreSQL", () => {
    it("says quickly that an unreachable database cannot be reached (exit 69)", async () => {
      const started = Date.now();
      const result = await stint(["status", "--database-url", "postgres://postgres:secret@127.0.0.1:1/postgres"]);
      expect(result.code).to.equal(ExitCode.Infrastructure);
      expect(result.stderr).to.match(/^stint: cannot reach PostgreSQL at 127\.0\.0\.1:1 \(.*ECONNREFUSED.*\)/);
      expect(result.stderr).to.not.include("secret");
      expect(Date.now() - started).to.be.below(5_000);
    });

    it("says that the login was refused or the database does not exist (exit 78)", async () => {
      const url = new URL(databaseUrl());
      url.username = "stint_cli_no_such_role";
      const login = await stint(["status", "--database-url", url.toString()]);
      expect(login.code).to.equal(ExitCode.Config);
      expect(login.stderr).to.match(/refused the login: .* — check the user and password in DATABASE_URL\n$/);
      const database = new URL(databaseUrl());
      database.pathname = "/stint_cli_no_such_database";
      const missing = await stint(["status", "--database-url", database.toString()]);
      expect(missing.code).to.equal(ExitCode.Config);
      expect(missing.stderr).to.match(/stint_cli_no_such_database.* — check the database name in DATABASE_URL\n$/);
    });

    it("says that a schema without stint tables needs `stint migrate` (exit 78)", async () => {
      databaseUrl();
      const result = await stint(["status", "--schema", "stint_cli_never_migrated"]);
      expect(result.code).to.equal(ExitCode.Config);
      expect(result.stderr).to.include('stint: schema "stint_cli_never_migrated" has no stint tables — run `stint migrate --schema stint_cli_never_migrated`');
    });

    describe("with a migrated schema", () => {
      let test: TestSchema;
      before(async () => {
        test = await createTestSchema({ prefix: "stint_cli", maxConnections: 4 });
      });
      after(() => test.drop());

      it("says that a schema behind this stint's migrations needs `stint migrate` (exit 78)", async () => {
        const outdated = await createTestSchema({ prefix: "stint_cli", maxConnections: 2 });
        try {
          await sql`DELETE FROM ${sql.id(outdated.schema, "migrations")} WHERE version > 1`.execute(outdated.db);
          const result = await stint(["jobs", "list", "--schema", outdated.schema]);
          expect(result.code).to.equal(ExitCode.Config);
          expect(result.stderr).to.match(
            new RegExp(`^stint: schema "${outdated.schema}" is at migration 1, this stint needs \\d+ — run \`stint migrate --schema ${outdated.schema}\`\n$`),
          );
        } finally {
          await outdated.drop();
        }
      });

      it("reads the schema from STINT_SCHEMA when --schema is not given", async () => {
        const result = await stint(["status", "--json"], { env: { DATABASE_URL: databaseUrl(), STINT_SCHEMA: test.schema } });
        expect(result.code).to.equal(ExitCode.Ok);
        expect((result.json() as { schema: string }).schema).to.equal(test.schema);
      });

      it("accepts global options before the command", async () => {
        const result = await stint(["--schema", test.schema, "--json", "status"]);
        expect(result.code).to.equal(ExitCode.Ok);
        expect((result.json() as { schema: string }).schema).to.equal(test.schema);
      });
    });
  });
});
