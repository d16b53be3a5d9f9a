import { ExitCode } from "@stint/core";
import type { ScheduleStore } from "@stint/core/driver";
import { CliError } from "../cli-error";
import type { CommandContext } from "../command";
import type { Connection } from "./open-connection";

/**
 * Connects and returns the connection with its schedule store, or fails
 * (exit 1) when the driver registers none.
 *
 * @example
 * ```ts
 * const { schedules } = await connectSchedules(context);
 * await schedules.listSchedules();
 * ```
 */
export async function connectSchedules(context: CommandContext): Promise<Connection & { readonly schedules: ScheduleStore }> {
  const connection = await context.connect();
  const { schedules } = connection;
  if (schedules === undefined) throw new CliError(ExitCode.Failure, "this version of @stint/postgres-driver registers no schedule store");
  return { ...connection, schedules };
}
