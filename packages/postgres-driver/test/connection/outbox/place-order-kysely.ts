import type { JobClient } from "@stint/core";
import type { Kysely } from "kysely";
import type { DB } from "./db";
import { SendReceipt } from "./jobs";

export async function placeOrder(db: Kysely<DB>, client: JobClient, order: { id: number; email: string }): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.insertInto("orders").values(order).execute();
    await client.enqueue(SendReceipt, { orderId: order.id }, { transaction: trx });
  });
}
