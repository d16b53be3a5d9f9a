import type { JobClient } from "@stint/core";
import type { NodePgDatabase } from "drizzle-orm/node-postgres";
import { SendReceipt } from "./jobs";
import { orders } from "./schema";

export async function placeOrder(db: NodePgDatabase, client: JobClient, order: { id: number; email: string }): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.insert(orders).values(order);
    await client.enqueue(SendReceipt, { orderId: order.id }, { transaction: tx });
  });
}
