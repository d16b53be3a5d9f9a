import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { ThrowawayPostgres } from "../src";
import { findBinaries } from "../src/postgres-binaries";
import { entries, scratchDirectory } from "./helpers/scratch-directory";

const RUNNING_AS_ROOT = process.getuid?.() === 0;

async function currentDatabase(connectionString: string): Promise<string> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    const { rows } = await client.query<{ readonly name: string }>("SELECT current_database() AS name");
    return rows[0]?.name ?? "";
  } finally {
    await client.end();
  }
}

/** The installed binaries' `native/` directory, behind a link inside a directory only its owner may enter (0700). */
async function binariesBehindPrivateDirectory(): Promise<{ readonly dir: string; readonly binariesDir: string }> {
  const dir = mkdtempSync(join(tmpdir(), "stint-test-private-"));
  symlinkSync((await findBinaries()).dir, join(dir, "native"));
  return { dir, binariesDir: join(dir, "native") };
}

describe("a throwaway PostgreSQL", () => {
  let tmpDir: string;
  beforeEach(() => {
    tmpDir = scratchDirectory();
  });
  afterEach(() => rmSync(tmpDir, { recursive: true, force: true }));

  it("serves the database stint on 127.0.0.1, survives a restart, and leaves nothing once stopped", async () => {
    const server = await ThrowawayPostgres.start({ tmpDir, settings: { max_connections: 50 } });
    try {
      expect(server.connectionString).to.equal(`postgres://postgres:postgres@127.0.0.1:${server.port}/stint`);
      expect(await currentDatabase(server.connectionString)).to.equal("stint");
      expect(await server.restart("fast")).to.be.a("number");
      expect(await currentDatabase(server.connectionString)).to.equal("stint");
    } finally {
      await server.stop();
    }
    expect(entries(tmpDir)).to.deep.equal([]);
  });

  it("starts a streaming standby that a synchronous primary waits for, down and up again, and leaves nothing once both are stopped", async () => {
    const primary = await ThrowawayPostgres.start({ tmpDir });
    const client = new pg.Client({ connectionString: primary.connectionString });
    try {
      const standby = await primary.startStandby("the_standby");
      try {
        await client.connect();
        await client.query("CREATE TABLE marks (n int)");
        await client.query("ALTER SYSTEM SET synchronous_standby_names = 'the_standby'");
        await client.query("SELECT pg_reload_conf()");
        await client.query("INSERT INTO marks VALUES (1)");
        const replica = new pg.Client({ connectionString: standby.connectionString });
        await replica.connect();
        const recovering = await replica.query<{ readonly r: boolean }>("SELECT pg_is_in_recovery() AS r");
        await replica.end();
        expect(recovering.rows[0]?.r, "the copy runs as a standby").to.equal(true);

        await standby.shutDown("immediate");
        const waiting = client.query("INSERT INTO marks VALUES (2)");
        const first = await Promise.race([waiting.then(() => "committed"), new Promise((resolve) => setTimeout(() => resolve("waiting"), 1_000))]);
        expect(first, "a commit waits while the synchronous standby is down").to.equal("waiting");
        await standby.startUp();
        await waiting;
      } finally {
        await standby.stop();
      }
    } finally {
      await client.end().catch(() => undefined);
      await primary.stop();
    }
    expect(entries(tmpDir)).to.deep.equal([]);
  });

  it("asks for the password over TCP with passwordAuth, and its connection string gives it", async () => {
    const server = await ThrowawayPostgres.start({ tmpDir, passwordAuth: { password: "s3 cret/@" } });
    try {
      expect(server.connectionString).to.equal(`postgres://postgres:s3%20cret%2F%40@127.0.0.1:${server.port}/stint`);
      expect(await currentDatabase(server.connectionString)).to.equal("stint");
      const wrong = await currentDatabase(`postgres://postgres:wrong@127.0.0.1:${server.port}/stint`).catch((thrown: unknown) => thrown);
      expect(wrong).to.have.property("code", "28P01");
      expect(existsSync(join(tmpDir, entries(tmpDir)[0] ?? "", "password")), "initdb's password file is gone").to.equal(false);
    } finally {
      await server.stop();
    }
    expect(entries(tmpDir)).to.deep.equal([]);
  });

  it("keeps its directory private to the user the server runs as", async () => {
    const server = await ThrowawayPostgres.start({ tmpDir });
    try {
      const [name] = entries(tmpDir);
      const { mode, uid } = statSync(join(tmpDir, name ?? ""));
      const serverUid = RUNNING_AS_ROOT ? Number(execFileSync("id", ["-u", "postgres"]).toString()) : process.getuid?.();
      expect({ uid, mode: (mode & 0o777).toString(8) }).to.deep.equal({ uid: serverUid, mode: "700" });
    } finally {
      await server.stop();
    }
  });

  it("runs from a copy of the binaries, and says so, when the server's user cannot reach them (as root), and removes the copy", async () => {
    const { dir, binariesDir } = await binariesBehindPrivateDirectory();
    const notices: string[] = [];
    try {
      const server = await ThrowawayPostgres.start({ tmpDir, binariesDir, onNotice: (line) => notices.push(line) });
      try {
        expect(await currentDatabase(server.connectionString)).to.equal("stint");
      } finally {
        await server.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const expected = RUNNING_AS_ROOT ? [`the postgres user cannot reach ${binariesDir} (${dir} is 0700); running PostgreSQL from a copy in ${tmpDir}/`] : [];
    expect(notices.map((line) => line.replace(/stint-pg-\w+\/postgresql$/, ""))).to.deep.equal(expected);
    expect(entries(tmpDir)).to.deep.equal([]);
  });
});
