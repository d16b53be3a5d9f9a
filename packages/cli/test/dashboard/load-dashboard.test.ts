import { expect } from "chai";
import * as dashboardPackage from "@stint/dashboard";
import { ExitCode } from "../../src/index";
import { DASHBOARD_PACKAGE, loadDashboardPackage } from "../../src/dashboard/load-dashboard";
import { cliVersion } from "../../src/version";

/** What Node's `require` throws for a package it cannot find. */
function notFound(name: string): Error {
  return Object.assign(new Error(`Cannot find module '${name}'\nRequire stack:\n- /app/node_modules/@stint/cli/dist/src/dashboard/load-dashboard.js`), {
    code: "MODULE_NOT_FOUND",
  });
}

/** Runs `load` and returns what it threw. */
function thrownBy(load: () => unknown): { exitCode?: number; code?: string; message: string } {
  try {
    load();
  } catch (thrown) {
    return thrown as { exitCode?: number; code?: string; message: string };
  }
  throw new Error("expected a failure");
}

describe("loadDashboardPackage", () => {
  it("loads the installed dashboard package by its name", () => {
    const asked: string[] = [];
    const loaded = loadDashboardPackage((name) => {
      asked.push(name);
      return dashboardPackage;
    });
    expect(asked).to.deep.equal(["@stint/dashboard"]);
    expect(loaded.createDashboard).to.equal(dashboardPackage.createDashboard);
  });

  it("says how to install the dashboard of the CLI's version when it is missing (exit 78)", () => {
    const failure = thrownBy(() =>
      loadDashboardPackage((name) => {
        throw notFound(name);
      }),
    );
    expect(failure.exitCode).to.equal(ExitCode.Config);
    expect(failure.message).to.contain(`${DASHBOARD_PACKAGE}, which is not installed`);
    expect(failure.message).to.contain(`npm install ../stint-tarballs/stint-dashboard-${cliVersion()}.tgz`);
    expect(failure.message).to.contain(`npm install @stint/dashboard@${cliVersion()}`);
  });

  it("reports a dashboard that is installed but cannot load as it is, not as missing", () => {
    const broken = notFound("kysely");
    const failure = thrownBy(() =>
      loadDashboardPackage(() => {
        throw broken;
      }),
    );
    expect(failure).to.equal(broken);
  });

  it("refuses a package of that name that is not the dashboard", () => {
    const failure = thrownBy(() => loadDashboardPackage(() => ({ somethingElse: true })));
    expect(failure.exitCode).to.equal(ExitCode.Config);
    expect(failure.message).to.contain("does not export createDashboard");
  });
});
