import { expect } from "chai";
import { sql } from "kysely";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { psql, psqlBinary } from "./psql";

describe("enqueue from psql", () => {
  let binary: string;
  let test: TestSchema;
  let app: string;

  before(() => {
    binary = psqlBinary();
  });
  beforeEach(async () => {
    test = await createTestSchema({ maxConnections: 2 });
    app = `${test.schema}_app`;
  });
  afterEach(async () => {
    await sql`DROP SCHEMA IF EXISTS ${sql.id(app)} CASCADE`.execute(test.db);
    await test.drop();
  });

  /** Runs `script` through psql and expects it to succeed; returns its output lines. */
  async function run(script: string): Promise<string[]> {
    const result = await psql(test.connectionString, script, binary);
    expect(result.status, result.stderr).to.equal(0);
    return result.stdout.split("\n").filter((line) => line !== "");
  }

  async function jobsOf(queue: string): Promise<{ id: string; payload: unknown; priority: number; dedupe_key: string | null }[]> {
    const { rows } = await sql<{ id: string; payload: unknown; priority: number; dedupe_key: string | null }>`SELECT id::text, payload, priority, dedupe_key
      FROM ${sql.id(test.schema, "jobs")} WHERE queue = ${queue} ORDER BY id`.execute(test.db);
    return rows;
  }

  it("enqueues in positional and in named notation, and returns the holder's id for a duplicate", async () => {
    const s = `"${test.schema}"`;
    const ids = await run(`
SELECT ${s}.enqueue('mail', '{"to": "a@example.com"}');
SELECT ${s}.enqueue('mail', '{"to": "b@example.com"}', now() + interval '1 hour', NULL, 5);
SELECT ${s}.enqueue(queue => 'mail', payload => '{"to": "c@example.com"}', priority => 7, max_attempts => 3,
                    timeout => '30 seconds', dedupe_key => 'mail:c', meta => '{"tenant": "acme"}');
SELECT ${s}.enqueue(queue => 'mail', payload => '{"to": "c@example.com", "again": true}', dedupe_key => 'mail:c');
`);
    expect(ids).to.have.length(4);
    expect(ids[3], "the duplicate names its holder").to.equal(ids[2]);
    const jobs = await jobsOf("mail");
    expect(jobs.map((job) => job.id)).to.deep.equal(ids.slice(0, 3));
    expect(jobs.map((job) => [job.payload, job.priority, job.dedupe_key])).to.deep.equal([
      [{ to: "a@example.com" }, 0, null],
      [{ to: "b@example.com" }, 5, null],
      [{ to: "c@example.com" }, 7, "mail:c"],
    ]);
    expect(await test.store.getJob({ id: ids[2]! })).to.deep.include({ maxAttempts: 3, timeoutMs: 30_000, meta: { tenant: "acme" } });
  });

  it("enqueues from an AFTER INSERT trigger on an application table, in the same transaction: a commit keeps the job, a rollback leaves none", async () => {
    await run(`
CREATE SCHEMA "${app}";
CREATE TABLE "${app}".signups (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, email text NOT NULL);
CREATE FUNCTION "${app}".enqueue_welcome() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "${test.schema}".enqueue('send-welcome', jsonb_build_object('signupId', NEW.id, 'email', NEW.email),
                                   dedupe_key => 'welcome:' || NEW.id);
  RETURN NULL;
END
$$;
CREATE TRIGGER signups_enqueue_welcome AFTER INSERT ON "${app}".signups
  FOR EACH ROW EXECUTE FUNCTION "${app}".enqueue_welcome();
`);
    const inside = await run(`
BEGIN;
INSERT INTO "${app}".signups (email) VALUES ('ada@example.com');
SELECT count(*) FROM "${test.schema}".jobs WHERE queue = 'send-welcome';
COMMIT;
BEGIN;
INSERT INTO "${app}".signups (email) VALUES ('bob@example.com'), ('eve@example.com');
SELECT count(*) FROM "${test.schema}".jobs WHERE queue = 'send-welcome';
ROLLBACK;
`);
    expect(inside, "the job is there inside each transaction").to.deep.equal(["1", "3"]);
    const { rows: signups } = await sql<{ id: string; email: string }>`SELECT id::text, email FROM ${sql.id(app, "signups")}`.execute(test.db);
    expect(signups.map((row) => row.email)).to.deep.equal(["ada@example.com"]);
    const jobs = await jobsOf("send-welcome");
    expect(jobs.map((job) => [job.payload, job.dedupe_key])).to.deep.equal([
      [{ signupId: Number(signups[0]!.id), email: "ada@example.com" }, `welcome:${signups[0]!.id}`],
    ]);
  });

  it("leaves no job after a rolled-back transaction, and none when a refusal aborts it", async () => {
    const s = `"${test.schema}"`;
    await run(`
BEGIN;
SELECT ${s}.enqueue('mail', '{"n": 1}');
ROLLBACK;
`);
    const aborted = await psql(
      test.connectionString,
      `
BEGIN;
SELECT ${s}.enqueue('mail', '{"n": 2}');
SELECT ${s}.enqueue('mail', '{"n": 3}', priority => 99999);
COMMIT;
`,
      binary,
    );
    expect(aborted.status, "psql stops at the refusal").to.equal(3);
    expect(await jobsOf("mail")).to.deep.equal([]);
  });

  it("shows a refusal with SQLSTATE 22023, its message and the parameter's name, and stops the script", async () => {
    const result = await psql(
      test.connectionString,
      `
\\set VERBOSITY verbose
SELECT "${test.schema}".enqueue('Send Invoice', '{}');
SELECT 'not reached';
`,
      binary,
    );
    expect(result.status).to.equal(3);
    expect(result.stderr).to.include(
      'ERROR:  22023: queue must be 1-128 characters of lower-case letters, digits and _ . : - starting with a letter or digit, got "Send Invoice"',
    );
    expect(result.stderr).to.include("COLUMN NAME:  queue");
    expect(result.stdout).to.not.include("not reached");
  });
});
