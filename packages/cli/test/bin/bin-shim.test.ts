import { spawnSync } from "node:child_process";
import { accessSync, constants, copyFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { ExitCode } from "../../src/index";

/** packages/cli, from dist/test/bin. */
const PACKAGE_DIR = join(__dirname, "..", "..", "..");
const SHIM = join(PACKAGE_DIR, "bin", "stint.js");
const REPOSITORY = join(PACKAGE_DIR, "..", "..");

function runNode(script: string, args: readonly string[]): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [script, ...args], { encoding: "utf8", env: { PATH: process.env["PATH"] ?? "" } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("the stint command's bin shim", () => {
  it("is the package's bin, executable, and shipped in the tarball", () => {
    const manifest = JSON.parse(readFileSync(join(PACKAGE_DIR, "package.json"), "utf8")) as { bin: Record<string, string>; files: string[] };
    expect(manifest.bin).to.deep.equal({ stint: "bin/stint.js" });
    expect(manifest.files).to.include("bin");
    expect(() => accessSync(SHIM, constants.X_OK)).not.to.throw();
    expect(readFileSync(SHIM, "utf8")).to.match(/^#!\/usr\/bin\/env node\n/);
  });

  it("is linked into the repository's node_modules/.bin by npm", () => {
    expect(realpathSync(join(REPOSITORY, "node_modules", ".bin", "stint"))).to.equal(realpathSync(SHIM));
  });

  it("hands over to the compiled CLI", () => {
    const help = runNode(SHIM, ["--help"]);
    expect(help.code).to.equal(ExitCode.Ok);
    expect(help.stdout).to.match(/^Usage: stint <command>/);
  });

  it("says how to build, and fails, when the CLI is not built", () => {
    const unbuilt = mkdtempSync(join(tmpdir(), "stint-unbuilt-"));
    try {
      mkdirSync(join(unbuilt, "bin"));
      copyFileSync(SHIM, join(unbuilt, "bin", "stint.js"));
      const run = runNode(join(unbuilt, "bin", "stint.js"), ["--help"]);
      expect(run.code).to.equal(ExitCode.Config);
      expect(run.stdout).to.equal("");
      expect(run.stderr).to.contain("run `npm run build`");
    } finally {
      rmSync(unbuilt, { recursive: true, force: true });
    }
  });
});
