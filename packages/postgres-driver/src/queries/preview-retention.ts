import { sql, type Kysely } from "kysely";
import { KEPT_PARTITION, listExpiredPartitions } from "./history-partitions";
import { millisecondsInterval } from "./job-row";
import { deletesWithinDays, dropsPartitions, sparedQueues, type RetainedState, type RetentionPass } from "./retention-plan";
import { surveyPartition } from "./survey-partition";

/** What {@link previewRetention} takes. */
export interface RetentionPreviewParams {
  /** The passes, in the order they would run (as `stint prune` runs them: one per state). */
  readonly passes: readonly RetentionPass[];
  /** Also count the effect-ledger rows recorded longer ago than this many milliseconds. */
  readonly effectsOlderThanMs?: number;
}

/** A day partition a pass would drop whole. */
export interface PartitionDropPreview {
  /** `finished_jobs_YYYYMMDD`. */
  readonly name: string;
  /** Its UTC day, `YYYY-MM-DD`. */
  readonly day: string;
  /** Jobs of the pass's states in it, which go with the table. */
  readonly jobs: number;
  /** Jobs of other states in it, which the drop puts back into `finished_jobs_kept`. */
  readonly kept: number;
}

/** Jobs per finished state. */
export type CountsByState = Readonly<Record<RetainedState, number>>;

/** What one pass would delete. */
export interface RetentionPassPreview {
  readonly pass: RetentionPass;
  /** Jobs that would go with the partitions dropped whole. */
  readonly inPartitions: CountsByState;
  /** Jobs that would be deleted row by row. */
  readonly rowByRow: CountsByState;
  /**
   * Jobs past the cutoff that stay for now, in day partitions not wholly
   * past it: they go when their whole day is, at most a day later.
   */
  readonly waiting: CountsByState;
  /** The partitions it would drop whole, oldest first. */
  readonly partitions: readonly PartitionDropPreview[];
}

/** What {@link previewRetention} found. */
export interface RetentionPreview {
  readonly passes: readonly RetentionPassPreview[];
  /** Effect-ledger rows past `effectsOlderThanMs`, when it was given. */
  readonly effects: number | undefined;
}

interface PastCutoff {
  readonly source: string;
  readonly state: RetainedState;
  readonly n: string;
}

/**
 * What retention passes would delete, without deleting anything or taking
 * any lock but a reader's: per pass and state, how many jobs would go with
 * whole day partitions (and which partitions, with the rows each holds and
 * would put back into `finished_jobs_kept`), how many row by row, and how
 * many are past the cutoff but wait for their whole day. It decides as
 * `deleteFinishedBefore` does (`listExpiredPartitions`, `surveyPartition`,
 * `deletesWithinDays`); a later pass sees the partitions an earlier one
 * would drop as gone, their kept rows in `finished_jobs_kept`. The counts
 * read every row past each cutoff once: an operator's command, not a
 * maintenance one.
 *
 * ### SQL
 * ```sql
 * -- per pass, after listExpiredPartitions and surveyPartition:
 * SELECT c.relname AS source, f.state, count(*) AS n
 *   FROM "stint"."finished_jobs" AS f JOIN pg_class AS c ON c.oid = f.tableoid
 *  WHERE f.state = ANY($1::text[]) AND f.finished_at < now() - $2 * interval '1 millisecond' [AND f.queue = ANY($3::text[])]
 *  GROUP BY c.relname, f.state
 * UNION ALL
 * SELECT 'jobs', state, count(*) FROM "stint"."jobs"
 *  WHERE state = ANY($1::text[]) AND finished_at < now() - $2 * interval '1 millisecond' [AND queue = ANY($3::text[])]
 *  GROUP BY state;
 * SELECT count(*) AS n FROM "stint"."effects" WHERE created_at < now() - $4 * interval '1 millisecond';
 * ```
 *
 * @example
 * ```ts
 * const week = 7 * 86_400_000;
 * const { passes } = await previewRetention(db, "stint", { passes: [{ states: ["succeeded"], olderThanMs: week }] });
 * for (const { name, jobs, kept } of passes[0]!.partitions) console.log(`${name}: ${jobs} go, ${kept} kept`);
 * ```
 */
export async function previewRetention(executor: Kysely<any>, schema: string, params: RetentionPreviewParams): Promise<RetentionPreview> {
  const droppedBefore = new Set<string>();
  const passes: RetentionPassPreview[] = [];
  for (const pass of params.passes) {
    const drops = new Map<string, { name: string; day: string; jobs: number; kept: number }>();
    const thinned = new Set<string>();
    if (dropsPartitions(pass) && pass.states.length > 0) {
      for (const partition of await listExpiredPartitions(executor, schema, pass.olderThanMs)) {
        if (droppedBefore.has(partition.name)) continue;
        const survey = await surveyPartition(executor, schema, partition, pass);
        if (survey.drop) drops.set(partition.name, { ...partition, jobs: 0, kept: survey.kept });
        else thinned.add(partition.name);
      }
    }
    const inPartitions = zeros();
    const rowByRow = zeros();
    const waiting = zeros();
    for (const { source, state, n } of await countPastCutoff(executor, schema, pass)) {
      const count = Number(n);
      const drop = drops.get(source);
      if (drop !== undefined) {
        drop.jobs += count;
        inPartitions[state] += count;
      } else if (source === "jobs" || source === KEPT_PARTITION || droppedBefore.has(source) || thinned.has(source) || deletesWithinDays(pass)) {
        rowByRow[state] += count;
      } else {
        waiting[state] += count;
      }
    }
    for (const name of drops.keys()) droppedBefore.add(name);
    const partitions = [...drops.values()].sort((a, b) => a.day.localeCompare(b.day)).map((drop) => Object.freeze({ ...drop }));
    passes.push(Object.freeze({ pass, inPartitions, rowByRow, waiting, partitions: Object.freeze(partitions) }));
  }
  const effects = params.effectsOlderThanMs === undefined ? undefined : await countEffectsBefore(executor, schema, params.effectsOlderThanMs);
  return Object.freeze({ passes: Object.freeze(passes), effects });
}

/** The pass's jobs past its cutoff, per table (`jobs`, or a partition of `finished_jobs`) and state. */
async function countPastCutoff(executor: Kysely<any>, schema: string, pass: RetentionPass): Promise<readonly PastCutoff[]> {
  if (pass.states.length === 0 || pass.queues?.length === 0) return [];
  const states = sql`${[...pass.states]}::text[]`;
  const cutoff = sql`now() - ${millisecondsInterval(pass.olderThanMs)}`;
  const queues = pass.queues === undefined ? undefined : sql`${[...pass.queues]}::text[]`;
  const { rows } = await sql<PastCutoff>`SELECT c.relname AS source, f.state, count(*) AS n
  FROM ${sql.id(schema, "finished_jobs")} AS f
  JOIN pg_class AS c ON c.oid = f.tableoid
 WHERE f.state = ANY(${states}) AND f.finished_at < ${cutoff} ${queues === undefined ? sparedQueues(pass) : sql`AND f.queue = ANY(${queues})`}
 GROUP BY c.relname, f.state
UNION ALL
SELECT 'jobs', state, count(*) FROM ${sql.id(schema, "jobs")}
 WHERE state = ANY(${states}) AND finished_at < ${cutoff} ${queues === undefined ? sparedQueues(pass) : sql`AND queue = ANY(${queues})`}
 GROUP BY state`.execute(executor);
  return rows;
}

async function countEffectsBefore(executor: Kysely<any>, schema: string, olderThanMs: number): Promise<number> {
  const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.id(schema, "effects")}
 WHERE created_at < now() - ${millisecondsInterval(olderThanMs)}`.execute(executor);
  return Number(rows[0]?.n ?? 0);
}

function zeros(): Record<RetainedState, number> {
  return { succeeded: 0, dead: 0, cancelled: 0 };
}
