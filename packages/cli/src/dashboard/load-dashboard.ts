import { configError } from "../cli-error";
import { cliVersion } from "../version";

/** The package `stint dashboard` serves: an optional peer dependency of the CLI, which every other command works without. */
export const DASHBOARD_PACKAGE = "@stint/dashboard";

/** How a package is loaded by name: Node's `require` by default (it loads ES modules too on Node 20.19 and later). */
export type LoadPackage<Module> = (name: string) => Module;

/**
 * Loads `@stint/dashboard` when `stint dashboard` starts, so that the rest
 * of the CLI never needs it: the package is an optional peer dependency,
 * installed beside `@stint/cli` only by those who serve the dashboard.
 * When it cannot be found, a configuration error (exit 78) says how to
 * install the version that goes with this CLI; a dashboard that is there
 * but fails to load is reported with its own error. `Module` is the type
 * the caller names (`typeof import("@stint/dashboard")`), which `require`
 * (typed `any`) takes on: it stays out of this module's declarations, so
 * the CLI's types never name the dashboard package.
 *
 * @example
 * ```ts
 * const { createDashboard } = loadDashboardPackage<typeof import("@stint/dashboard")>();
 * ```
 */
export function loadDashboardPackage<Module>(load: LoadPackage<Module> = require): Module {
  let loaded: Module;
  try {
    loaded = load(DASHBOARD_PACKAGE);
  } catch (thrown) {
    if (!isMissing(thrown, DASHBOARD_PACKAGE)) throw thrown;
    throw configError(missingDashboardMessage(cliVersion()), thrown);
  }
  if (typeof (loaded as { createDashboard?: unknown } | null | undefined)?.createDashboard !== "function") {
    throw configError(`${DASHBOARD_PACKAGE} was found but does not export createDashboard: install the version that goes with @stint/cli ${cliVersion()}`);
  }
  return loaded;
}

/**
 * What `stint dashboard` says when `@stint/dashboard` is not installed: the
 * two ways to add it, both at the CLI's own version.
 *
 * @example
 * ```ts
 * missingDashboardMessage("0.1.0"); // "stint dashboard needs @stint/dashboard, which is not installed …"
 * ```
 */
export function missingDashboardMessage(version: string): string {
  return (
    `stint dashboard needs ${DASHBOARD_PACKAGE}, which is not installed (the other commands work without it); ` +
    `add the version that goes with this CLI beside @stint/cli: npm install ../stint-tarballs/stint-dashboard-${version}.tgz ` +
    `(the tarball \`npm pack --workspace ${DASHBOARD_PACKAGE}\` writes in a stint checkout), or npm install ${DASHBOARD_PACKAGE}@${version} from a registry that serves it`
  );
}

/** True when `thrown` says that the package `name` itself cannot be found (not one of its own dependencies). */
function isMissing(thrown: unknown, name: string): boolean {
  const { code, message } = (thrown ?? {}) as { code?: unknown; message?: unknown };
  if (code !== "MODULE_NOT_FOUND" && code !== "ERR_MODULE_NOT_FOUND") return false;
  return typeof message === "string" && (message.startsWith(`Cannot find module '${name}'`) || message.startsWith(`Cannot find package '${name}'`));
}
