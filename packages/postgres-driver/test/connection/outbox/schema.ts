import { integer, pgTable, text } from "drizzle-orm/pg-core";

/** The application's orders table, as Drizzle sees it. */
export const orders = pgTable("orders", {
  id: integer("id").primaryKey(),
  email: text("email").notNull(),
});
