/** The application's tables, as Kysely sees them. */
export interface DB {
  orders: { id: number; email: string };
}
