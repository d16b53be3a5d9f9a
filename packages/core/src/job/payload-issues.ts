/** One thing a schema found wrong with a payload: where (`payload.items[3].sku`) and what its validator said. */
export interface PayloadIssue {
  readonly path: string;
  readonly message: string;
}

/**
 * The issues as one line: `payload.email: Invalid email address; payload.age: Too small`.
 *
 * @example
 * ```ts
 * describeIssues([{ path: "payload.email", message: "Invalid email address" }]); // "payload.email: Invalid email address"
 * ```
 */
export function describeIssues(issues: readonly PayloadIssue[]): string {
  if (issues.length === 0) return "payload: the schema refused it without saying why";
  return issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ");
}
