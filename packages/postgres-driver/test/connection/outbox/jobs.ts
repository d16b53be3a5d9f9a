import { defineJob } from "@stint/core";

/** The job an order's commit leaves behind: mail the receipt. */
export const SendReceipt = defineJob<{ orderId: number }>("send-receipt");
