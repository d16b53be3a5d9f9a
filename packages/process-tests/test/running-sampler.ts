import { sql } from "kysely";
import type { TestSchema } from "@stint/postgres-driver/testing";

/** What a {@link RunningSampler} saw: the most jobs of one group (or line) running at once, and how often it looked. */
export interface RunningSamples {
  /** Per group key, the most of its jobs seen `running` in one sample. */
  readonly mostPerGroup: ReadonlyMap<string, number>;
  /** The most of any one group seen `running` in one sample. */
  readonly most: number;
  readonly samples: number;
}

/** A loop that counts the running jobs of each group of a queue every `everyMs`, until stopped. */
export interface RunningSampler {
  stop(): Promise<RunningSamples>;
}

/**
 * Starts sampling `SELECT group_key, count(*) FROM jobs WHERE state = 'running'
 * GROUP BY 1` for `queue` (grouped jobs only) every `everyMs` on the test
 * schema's pool, each sample one statement with one snapshot, until `stop()`.
 * A sample that fails rejects `stop()`.
 *
 * @example
 * ```ts
 * const sampler = sampleRunningPerGroup(t, "probe", 10);
 * await drain();
 * expect((await sampler.stop()).most).to.equal(2);
 * ```
 */
export function sampleRunningPerGroup(t: TestSchema, queue: string, everyMs: number): RunningSampler {
  const mostPerGroup = new Map<string, number>();
  let samples = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const { rows } = await sql<{ group_key: string; n: number }>`
        SELECT group_key, count(*)::int AS n FROM ${sql.id(t.schema, "jobs")}
         WHERE queue = ${queue} AND state = 'running' AND group_key <> '' GROUP BY 1`.execute(t.db);
      samples += 1;
      for (const { group_key: key, n } of rows) mostPerGroup.set(key, Math.max(mostPerGroup.get(key) ?? 0, n));
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return { mostPerGroup, most: Math.max(0, ...mostPerGroup.values()), samples };
    },
  };
}
