import type { ScheduleOrigin } from "../store/schedule-store";
import { ErrorCode } from "./error-codes";
import { StintError } from "./stint-error";

/**
 * A runtime schedule (`ScheduleClient.upsert`, `stint schedules add`) was
 * given the name of a schedule the application's code declares. Nothing
 * was written: a name belongs to the code or to run time, never both, so
 * that the next declaration cannot silently overwrite what an operator
 * created, nor an operator what the code says.
 *
 * @example
 * ```ts
 * // ScheduleConflictError: schedule "weekly-report" is declared in the application's code; a runtime schedule cannot take its name
 * err.scheduleName; // "weekly-report"
 * err.heldBy;       // "code"
 * ```
 */
export class ScheduleConflictError extends StintError {
  /** The schedule name both wanted. */
  readonly scheduleName: string;
  /** Where the stored schedule of that name comes from. */
  readonly heldBy: ScheduleOrigin;

  constructor(scheduleName: string, heldBy: ScheduleOrigin) {
    super(ErrorCode.ScheduleConflict, conflictMessage(scheduleName, heldBy));
    this.scheduleName = scheduleName;
    this.heldBy = heldBy;
  }
}

function conflictMessage(name: string, heldBy: ScheduleOrigin): string {
  const quoted = JSON.stringify(name);
  return heldBy === "code"
    ? `schedule ${quoted} is declared in the application's code; a runtime schedule cannot take its name (choose another name, or remove it from the code and then run \`stint schedules remove ${name}\`)`
    : `schedule ${quoted} was created at run time; the code cannot declare it too (remove it with \`stint schedules remove ${name}\`, or rename the declared one)`;
}
