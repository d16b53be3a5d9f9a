import { spawn, spawnSync } from "node:child_process";

/** What one run of psql printed, and how it exited. */
export interface PsqlRun {
  /** psql's exit status: 0, or 3 when a statement failed (the script runs with `ON_ERROR_STOP`). */
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The psql binary: `$PSQL`, else `psql` from the PATH. Throws a message that
 * says how to install it when there is none (Debian: `postgresql-client`;
 * `.ci/run` installs it).
 */
export function psqlBinary(): string {
  const binary = process.env["PSQL"] ?? "psql";
  const probe = spawnSync(binary, ["--version"], { encoding: "utf8" });
  if (probe.error !== undefined || probe.status !== 0) {
    throw new Error(
      `no psql binary (looked for ${binary}): these tests call the enqueue function the way other languages do, through psql; ` +
        "install it (Debian: apt-get install postgresql-client) or set PSQL to its path",
    );
  }
  return binary;
}

/**
 * Runs `script` through psql against `connectionString`, as a user would:
 * no `~/.psqlrc`, unaligned tuples-only output, stopping at the first
 * failed statement (exit status 3).
 *
 * @example
 * ```ts
 * const run = await psql(url, "SELECT stint.enqueue('mail', '{}');");
 * expect(run.stdout.trim()).to.match(/^\d+$/);
 * ```
 */
export function psql(connectionString: string, script: string, binary = psqlBinary()): Promise<PsqlRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      binary,
      ["--no-psqlrc", "--quiet", "--tuples-only", "--no-align", "--set", "ON_ERROR_STOP=1", "--dbname", connectionString, "--file", "-"],
      {
        env: { ...process.env, PGAPPNAME: "stint-psql-test", PGCONNECT_TIMEOUT: "10" },
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(script);
  });
}
