import type { JobClient } from "@stint/core";
import type { Knex } from "knex";
import { SendReceipt } from "./jobs";

export async function placeOrder(knex: Knex, client: JobClient, order: { id: number; email: string }): Promise<void> {
  await knex.transaction(async (trx) => {
    await trx("orders").insert(order);
    await client.enqueue(SendReceipt, { orderId: order.id }, { transaction: trx });
  });
}
