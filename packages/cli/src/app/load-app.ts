import { createRequire } from "node:module";
import { isAbsolute, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { LogLevel } from "@stint/core";
import type { DependencyContainer } from "tsyringe";
import { configError } from "../cli-error";

/** What `createApp` is given: where the database is, which schema to use and the log level asked for. */
export interface AppEnvironment {
  readonly connectionString: string;
  readonly schema: string;
  /**
   * The level `stint run --log-level` or `STINT_LOG_LEVEL` asks for, when
   * either does; pass it to `registerLogger(container, { level })` so the
   * flag reaches your logger (`--print-config` warns when it does not).
   */
  readonly logLevel?: LogLevel;
}

/**
 * An application as `stint run` sees it: its composition root (a tsyringe
 * container with the logger, the store and the workers registered) and how
 * to shut it down.
 */
export interface StintApp {
  readonly container: DependencyContainer;
  /** Disposes the container and closes the pools. Called once when the run ends. */
  close(): Promise<void>;
}

/**
 * What an app module exports for `stint run --app <module>`.
 *
 * @example
 * ```ts
 * // my-app/stint-app.ts
 * export function createApp(env: AppEnvironment): StintApp {
 *   const app = createCompositionRoot({ connectionString: env.connectionString, schema: env.schema });
 *   return { container: app.container, close: () => app.close() };
 * }
 * ```
 */
export type CreateApp = (env: AppEnvironment) => StintApp | Promise<StintApp>;

/**
 * Loads an app module and returns its `createApp`. `specifier` is a path
 * (relative to `cwd`) or a package specifier resolved from `cwd`, so an
 * application's own dependencies are found. ES modules and CommonJS both
 * work. Every failure is a configuration error (exit 78) that says what to
 * export.
 */
export async function loadCreateApp(specifier: string, cwd: string): Promise<CreateApp> {
  const createApp = exported(await loadAppModule(specifier, cwd), "createApp");
  if (typeof createApp !== "function") {
    throw configError(`app module ${specifier} does not export createApp(env): export a function that returns { container, close } (see \`stint run --help\`)`);
  }
  return createApp as CreateApp;
}

/** Checks what `createApp` returned. */
/** What an app module may export besides `createApp`: the migration of its own tables, run by `stint migrate --app`. */
export type MigrateApp = (env: AppEnvironment) => Promise<unknown>;

/**
 * The app module's optional `migrate(env)` (its own tables), or `undefined`.
 *
 * @example
 * ```ts
 * const migrateApp = await loadMigrateApp("@stint/examples/app", process.cwd());
 * await migrateApp?.({ connectionString, schema: "stint" });
 * ```
 */
export async function loadMigrateApp(specifier: string, cwd: string): Promise<MigrateApp | undefined> {
  const migrate = exported(await loadAppModule(specifier, cwd), "migrate");
  if (migrate !== undefined && typeof migrate !== "function") throw configError(`app module ${specifier} exports a migrate that is not a function`);
  return migrate as MigrateApp | undefined;
}

async function loadAppModule(specifier: string, cwd: string): Promise<Record<string, unknown>> {
  const path = resolveModule(specifier, cwd);
  try {
    return (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (thrown) {
    throw configError(`app module ${specifier} failed to load: ${thrown instanceof Error ? thrown.message : String(thrown)}`, thrown);
  }
}

function exported(loaded: Record<string, unknown>, name: string): unknown {
  return loaded[name] ?? (loaded["default"] as Record<string, unknown> | undefined)?.[name];
}

export function assertStintApp(app: unknown, specifier: string): StintApp {
  const candidate = app as { container?: { resolveAll?: unknown }; close?: unknown } | null;
  if (typeof candidate !== "object" || candidate === null || typeof candidate.container?.resolveAll !== "function" || typeof candidate.close !== "function") {
    throw configError(`createApp of ${specifier} must return { container: DependencyContainer, close(): Promise<void> }`);
  }
  return candidate as StintApp;
}

function resolveModule(specifier: string, cwd: string): string {
  const looksLikePath = specifier.startsWith(".") || isAbsolute(specifier) || /\.[cm]?[jt]s$/.test(specifier);
  if (looksLikePath) {
    const path = resolve(cwd, specifier);
    try {
      return createRequire(join(cwd, "noop.js")).resolve(path);
    } catch {
      throw configError(`app module ${specifier} not found (looked for ${path})`);
    }
  }
  try {
    return createRequire(join(cwd, "noop.js")).resolve(specifier);
  } catch {
    throw configError(`app module ${specifier} not found from ${cwd}: install it, or pass a path such as ./dist/stint-app.js`);
  }
}
