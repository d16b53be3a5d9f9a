import type { JobClient, QueueAdmin } from "@stint/core";
import { AiSummary } from "../jobs/ai-summary";

/**
 * How many summaries of one tenant may run at once, across every worker:
 * the model's quota is shared, so one tenant's import must not take all of
 * it. Set once, at deploy time; it is kept in the database.
 *
 * @example
 * ```ts
 * await capSummariesPerTenant(container.resolve(QueueAdmin));
 * ```
 */
export async function capSummariesPerTenant(admin: QueueAdmin): Promise<void> {
  await admin.limit(AiSummary, { maxRunningPerGroup: 2 });
}

/**
 * Asks for a summary of each of a tenant's documents, in the tenant's
 * group: claims take turns among tenants, so a tenant who uploads 100,000
 * documents does not hold up one who uploads ten.
 *
 * @example
 * ```ts
 * await summariseForTenant(client, "acme", [7, 8, 9]);
 * ```
 */
export async function summariseForTenant(client: JobClient, tenant: string, documentIds: readonly number[]): Promise<void> {
  await client.enqueueMany(
    AiSummary,
    documentIds.map((documentId) => ({ payload: { documentId }, options: { group: `tenant:${tenant}` } })),
  );
}
