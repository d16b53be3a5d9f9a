import { resolveWorkers, type JobDefinition } from "@stint/core";
import { configError } from "../cli-error";
import type { CommandContext } from "../command";
import { assertStintApp, loadCreateApp } from "./load-app";

/**
 * The job kind of `queue` as the application defines it: loads the app
 * module (as `stint run --app` does), finds the registered worker of the
 * queue and returns its job definition, with the kind's defaults
 * (`maxAttempts`, `timeoutMs`, `priority`) and payload limit. A queue the
 * app has no worker for is a configuration error (exit 78) naming the known
 * queues, unless `force`: then `undefined` (the caller uses stint's
 * defaults). The app is closed before this returns.
 *
 * @example
 * ```ts
 * const kind = await appJobKind(context, "./dist/stint-app.js", "send-invoice", false);
 * kind?.defaults.maxAttempts; // 10, as the app's defineJob says
 * ```
 */
export async function appJobKind(context: CommandContext, specifier: string, queue: string, force: boolean): Promise<JobDefinition<unknown> | undefined> {
  const kinds = await appJobKinds(context, specifier);
  const kind = kinds.find((candidate) => candidate.name === queue);
  if (kind !== undefined) return kind;
  if (force) return undefined;
  const known = kinds.map((candidate) => candidate.name).sort();
  throw configError(
    `${specifier} has no worker for queue "${queue}" (known queues: ${known.join(", ")}); check the name, or pass --force to enqueue with stint's defaults`,
  );
}

/**
 * The job kinds of every worker the application registers, as its
 * `defineJob`s say (with `secretFields`): loads the app module as
 * `stint run --app` does and closes the app before returning.
 *
 * @example
 * ```ts
 * const kinds = await appJobKinds(context, "./dist/stint-app.js");
 * kinds.map((kind) => kind.name); // ["send-invoice", …]
 * ```
 */
export async function appJobKinds(context: CommandContext, specifier: string): Promise<JobDefinition<unknown>[]> {
  const target = context.databaseTarget();
  const createApp = await loadCreateApp(specifier, context.cwd);
  const app = assertStintApp(await createApp({ connectionString: target.url, schema: context.schema }), specifier);
  try {
    return resolveWorkers(app.container).map((worker) => worker.job as JobDefinition<unknown>);
  } finally {
    await app.close();
  }
}
