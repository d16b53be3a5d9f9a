import { sql, type Kysely, type RawBuilder } from "kysely";
import { KEPT_PARTITION, listExpiredPartitions } from "./history-partitions";
import { millisecondsInterval } from "./job-row";
import { deletesWithinDays, sparedQueues, type RetainedState, type RetentionPass } from "./retention-plan";
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

/**
 * What one pass would delete, of what the passes before it leave: a job
 * is counted by one pass at most, so the passes' sums are what the prune
 * deletes.
 */
export interface RetentionPassPreview {
  readonly pass: RetentionPass;
  /** Jobs that would go with the partitions dropped whole. */
  readonly inPartitions: CountsByState;
  /** Jobs that would be deleted row by row. */
  readonly rowByRow: CountsByState;
  /**
   * Jobs past the cutoff that stay for now, in day partitions not wholly
   * past it, and that no pass would delete: they go when their whole day
   * is, at most a day later. Counted by the first pass they are past.
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

/** Jobs of one table and state, by the first pass that would delete them (`deleter`) and the first whose cutoff they are past. */
interface PastCutoff {
  readonly source: string;
  readonly state: RetainedState;
  readonly deleter: number | null;
  readonly past: number;
  readonly n: string;
}

/** How one pass would go, decided before anything is counted. */
interface PassLayout {
  readonly pass: RetentionPass;
  /** The partitions it drops whole, with what they keep. */
  readonly drops: Map<string, { name: string; day: string; jobs: number; kept: number }>;
  /** Where it deletes row by row (all of `finished_jobs` when `undefined`): it leaves the rest of its jobs past the cutoff waiting for their day. */
  readonly rowSources: ReadonlySet<string> | undefined;
}

/**
 * What retention passes would delete, without deleting anything or taking
 * any lock but a reader's: per pass and state, how many jobs would go with
 * whole day partitions (and which partitions, with the rows each holds and
 * would put back into `finished_jobs_kept`), how many row by row, and how
 * many are past the cutoff but wait for their whole day. It decides as
 * `deleteFinishedBefore` does (`listExpiredPartitions`, `surveyPartition`,
 * `deletesWithinDays`), pass after pass: a later pass sees the partitions
 * an earlier one would drop as gone, their kept rows in
 * `finished_jobs_kept`, and the rows an earlier one would delete as
 * deleted. So a job is counted once, by the first pass that would delete
 * it (a queue's own shorter retention after the global one, say), and a
 * job waiting for its day in one pass but deleted by a later one counts as
 * deleted: the totals are what a prune running these passes deletes. One
 * statement counts every row past the lowest cutoff once: an operator's
 * command, not a maintenance one.
 *
 * ### SQL
 * ```sql
 * -- after listExpiredPartitions and surveyPartition for each pass:
 * SELECT source, state, deleter, past, count(*) AS n FROM (
 *   SELECT c.relname AS source, f.state,
 *          CASE WHEN <pass 0 deletes it> THEN 0 WHEN <pass 1 deletes it> THEN 1 … END AS deleter,
 *          CASE WHEN <past pass 0's cutoff> THEN 0 … END AS past
 *     FROM "stint"."finished_jobs" AS f JOIN pg_class AS c ON c.oid = f.tableoid
 *    WHERE f.finished_at < now() - <the lowest cutoff> AND (<past pass 0's cutoff> OR …)
 *   UNION ALL
 *   SELECT 'jobs', state, CASE … END, CASE … END FROM "stint"."jobs" WHERE … ) AS rows
 *  GROUP BY source, state, deleter, past;
 * -- <past pass i's cutoff>: state = ANY($states) AND finished_at < now() - $ms * interval '1 millisecond'
 * --                          [AND queue = ANY($queues) | AND queue <> ALL($exceptQueues)]
 * -- <pass i deletes it>: <past its cutoff> [AND c.relname = ANY($tables it deletes from)]
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
  const layouts: PassLayout[] = [];
  for (const pass of params.passes) layouts.push(await layOut(executor, schema, pass, layouts));
  const counts = layouts.map(() => ({ inPartitions: zeros(), rowByRow: zeros(), waiting: zeros() }));
  for (const { source, state, deleter, past, n } of await countPastCutoff(executor, schema, layouts)) {
    const count = Number(n);
    if (deleter === null) {
      counts[past]!.waiting[state] += count;
      continue;
    }
    const drop = layouts[deleter]!.drops.get(source);
    if (drop !== undefined) drop.jobs += count;
    counts[deleter]![drop === undefined ? "rowByRow" : "inPartitions"][state] += count;
  }
  const passes = layouts.map(({ pass, drops }, index) => {
    const partitions = [...drops.values()].sort((a, b) => a.day.localeCompare(b.day)).map((drop) => Object.freeze({ ...drop }));
    return Object.freeze({ pass, ...counts[index]!, partitions: Object.freeze(partitions) });
  });
  const effects = params.effectsOlderThanMs === undefined ? undefined : await countEffectsBefore(executor, schema, params.effectsOlderThanMs);
  return Object.freeze({ passes: Object.freeze(passes), effects });
}

/**
 * Which partitions `pass` would drop whole and where it would delete row
 * by row, after the passes `before`: it lists the partitions wholly past
 * its cutoff that none of them drops, and surveys each without the rows
 * they would have deleted from it.
 */
async function layOut(executor: Kysely<any>, schema: string, pass: RetentionPass, before: readonly PassLayout[]): Promise<PassLayout> {
  const drops: PassLayout["drops"] = new Map();
  if (deletesWithinDays(pass)) return { pass, drops, rowSources: undefined };
  const droppedBefore = new Set(before.flatMap((layout) => [...layout.drops.keys()]));
  const rowSources = new Set([KEPT_PARTITION, ...droppedBefore]);
  if (pass.states.length > 0) {
    for (const partition of await listExpiredPartitions(executor, schema, pass.olderThanMs)) {
      if (droppedBefore.has(partition.name)) continue;
      const gone = before.filter((layout) => deletesFrom(layout, partition.name)).map((layout) => pastCutoff(layout.pass));
      const survey = await surveyPartition(executor, schema, partition, pass, gone.length === 0 ? undefined : sql.join(gone, sql` OR `));
      if (survey.drop) drops.set(partition.name, { ...partition, jobs: 0, kept: survey.kept });
      else rowSources.add(partition.name);
    }
  }
  return { pass, drops, rowSources };
}

/** Whether the pass of `layout` deletes rows of `source` (a partition of `finished_jobs`), whole or row by row. */
function deletesFrom(layout: PassLayout, source: string): boolean {
  return layout.rowSources === undefined || layout.rowSources.has(source) || layout.drops.has(source);
}

/** Its jobs past its cutoff, wherever they are: `jobs` or `finished_jobs` (columns unqualified, so it reads either). */
function pastCutoff(pass: RetentionPass): RawBuilder<unknown> {
  if (pass.states.length === 0 || pass.queues?.length === 0) return sql`false`;
  const queues = pass.queues === undefined ? sparedQueues(pass) : sql`AND queue = ANY(${[...pass.queues]}::text[])`;
  return sql`(state = ANY(${[...pass.states]}::text[]) AND finished_at < now() - ${millisecondsInterval(pass.olderThanMs)} ${queues})`;
}

/** Every job past some pass's cutoff, once, per table (`jobs`, or a partition of `finished_jobs`), state, first deleting pass and first pass it is past. */
async function countPastCutoff(executor: Kysely<any>, schema: string, layouts: readonly PassLayout[]): Promise<readonly PastCutoff[]> {
  if (layouts.length === 0) return [];
  const past = layouts.map((layout) => pastCutoff(layout.pass));
  const firstOf = (conditions: readonly RawBuilder<unknown>[]) =>
    sql`CASE ${sql.join(
      conditions.map((condition, index) => sql`WHEN ${condition} THEN ${index}::integer`),
      sql` `,
    )} END`;
  const deletedFrom = layouts.map((layout, index) =>
    layout.rowSources === undefined ? past[index]! : sql`(${past[index]!} AND c.relname = ANY(${[...layout.rowSources, ...layout.drops.keys()]}::text[]))`,
  );
  const anyPast = sql.join(past, sql` OR `);
  // The lowest cutoff, said once more on its own, lets the planner skip the partitions none reaches.
  const lowest = sql`now() - ${millisecondsInterval(Math.min(...layouts.map((layout) => layout.pass.olderThanMs)))}`;
  const { rows } = await sql<PastCutoff>`SELECT source, state, deleter, past, count(*) AS n FROM (
  SELECT c.relname AS source, f.state, ${firstOf(deletedFrom)} AS deleter, ${firstOf(past)} AS past
    FROM ${sql.id(schema, "finished_jobs")} AS f
    JOIN pg_class AS c ON c.oid = f.tableoid
   WHERE f.finished_at < ${lowest} AND (${anyPast})
  UNION ALL
  SELECT 'jobs', state, ${firstOf(past)}, ${firstOf(past)}
    FROM ${sql.id(schema, "jobs")}
   WHERE finished_at < ${lowest} AND (${anyPast})
) AS rows
 GROUP BY source, state, deleter, past`.execute(executor);
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
