import { notFoundError, usageError, type CliError } from "../cli-error";
import { jobIdValue } from "./option-values";

/**
 * Reads a workflow id given as an argument (a positive integer, as job ids
 * are); anything else is a usage error (exit 2) that quotes it.
 *
 * @example
 * ```ts
 * workflowIdArgument("41"); // "41"
 * ```
 */
export function workflowIdArgument(text: string): string {
  const id = jobIdValue(text);
  if (id === undefined) throw usageError(`workflow id must be a positive integer, got ${JSON.stringify(text)}`);
  return id;
}

/** No workflow `id` in `schema` (exit 3, `STINT_NOT_FOUND`). */
export function workflowNotFound(id: string, schema: string): CliError {
  return notFoundError(`workflow ${id} not found in schema "${schema}" (stint workflows list shows the newest)`);
}
