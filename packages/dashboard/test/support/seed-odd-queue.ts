import type { JobStore } from "@stint/core";
import { sql, type Kysely } from "kysely";
import { enqueueJobs, makeDeadJobs } from "./seed-jobs";

/** What {@link seedOddQueue} wrote. */
export interface OddQueue {
  readonly queued: readonly string[];
  readonly dead: readonly string[];
}

/**
 * Writes, as SQL run by hand would, a queue whose name breaks the naming
 * rule: its `queues` row, `queued` waiting jobs and `dead` dead ones (made
 * under a valid name, then renamed in place).
 */
export async function seedOddQueue(db: Kysely<any>, schema: string, store: JobStore, queue: string, counts = { queued: 2, dead: 1 }): Promise<OddQueue> {
  const stand = `odd-${Math.random().toString(36).slice(2, 10)}`;
  const queued = await enqueueJobs(store, `${stand}-w`, counts.queued);
  const dead = await makeDeadJobs(store, `${stand}-d`, counts.dead, (id) => `Error: odd queue job ${id} failed`);
  await sql`INSERT INTO ${sql.id(schema, "queues")} (name) VALUES (${queue})`.execute(db);
  await sql`UPDATE ${sql.id(schema, "jobs")} SET queue = ${queue} WHERE queue = ${`${stand}-w`}`.execute(db);
  await sql`UPDATE ${sql.id(schema, "finished_jobs")} SET queue = ${queue} WHERE queue = ${`${stand}-d`}`.execute(db);
  return { queued, dead };
}
