import { sql } from "kysely";
import type { ChaosDatabase } from "./chaos-database";
import { sleep } from "./jobs";

/** The most jobs of one group, and of one serial line, a {@link GroupSampler} saw `running` in one sample. */
export interface GroupSamples {
  readonly mostInGroup: number;
  readonly mostInLine: number;
  readonly samples: number;
  /** Samples that failed (a poll during a fault); they count for nothing. */
  readonly failed: number;
}

/** Counts the running jobs of each group and line of a queue every `everyMs` until stopped. */
export interface GroupSampler {
  stop(): Promise<GroupSamples>;
}

/**
 * Starts sampling, every `everyMs`, how many jobs of each group and of each
 * serial line of `queue` are `running` (one statement, one snapshot per
 * sample), until `stop()`.
 *
 * @example
 * ```ts
 * const sampler = sampleGroups(database, "chaos", 10);
 * await drainWithFaults(database, { timeoutMs, tickMs });
 * const { mostInGroup, mostInLine } = await sampler.stop();
 * ```
 */
export function sampleGroups(database: ChaosDatabase, queue: string, everyMs: number): GroupSampler {
  let mostInGroup = 0;
  let mostInLine = 0;
  let samples = 0;
  let failed = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        const { rows } = await sql<{ line: boolean; most: number }>`
          SELECT line, max(n)::int AS most FROM (
            SELECT serial IS NOT NULL AS line, count(*) AS n FROM ${sql.id(database.schema, "jobs")}
             WHERE queue = ${queue} AND state = 'running' AND group_key <> '' GROUP BY group_key, serial IS NOT NULL) AS per_key
           GROUP BY line`.execute(database.db);
        samples += 1;
        for (const row of rows) {
          if (row.line) mostInLine = Math.max(mostInLine, row.most);
          else mostInGroup = Math.max(mostInGroup, row.most);
        }
      } catch {
        failed += 1;
      }
      await sleep(everyMs);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return { mostInGroup, mostInLine, samples, failed };
    },
  };
}
