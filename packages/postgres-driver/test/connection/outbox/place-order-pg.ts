import type { JobClient } from "@stint/core";
import type { Pool } from "pg";
import { SendReceipt } from "./jobs";

export async function placeOrder(pool: Pool, client: JobClient, order: { id: number; email: string }): Promise<void> {
  const connection = await pool.connect();
  try {
    await connection.query("BEGIN");
    await connection.query("INSERT INTO orders (id, email) VALUES ($1, $2)", [order.id, order.email]);
    await client.enqueue(SendReceipt, { orderId: order.id }, { transaction: connection });
    await connection.query("COMMIT");
  } catch (error) {
    await connection.query("ROLLBACK");
    throw error;
  } finally {
    connection.release();
  }
}
