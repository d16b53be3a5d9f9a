import type { ClaimedBatch, ClaimHold, QueueControls, QueueControlsChange } from "@stint/core";
import { sql, type Kysely, type RawBuilder, type Transaction } from "kysely";
import type { ClaimBatchParams } from "./claim-batch";
import { claimedBatch, queuesTable, type ClaimedRow } from "./job-row";
import { timestampValue } from "./timestamp-value";

/** How soon a claim held back by the running cap asks again (another worker's job may have finished). */
export const CAP_RETRY_MS = 200;

interface ControlsRow {
  readonly name: string;
  readonly paused: boolean;
  readonly max_running: number | null;
  readonly rate_limit: number | null;
  readonly rate_period_ms: number | null;
  readonly updated_at: Date | number;
}

const CONTROL_COLUMNS = sql`name, paused, max_running, rate_limit, rate_period_ms, updated_at`;

/**
 * The tokens a rate-limited queue may spend now: its bucket refilled at
 * `rate_limit / rate_period_ms` per millisecond since `rate_refilled_at`,
 * up to the burst (a tenth of a second's worth, at least 1, at most the
 * limit); a bucket never used is full.
 */
const BURST = sql`greatest(1, least(rate_limit, floor(rate_limit * 100.0 / rate_period_ms)))`;
const TOKENS_NOW = sql`least(${BURST}, coalesce(rate_tokens, ${BURST})
  + greatest(0, extract(epoch FROM now() - coalesce(rate_refilled_at, now())) * 1000) * rate_limit / rate_period_ms)`;

/**
 * Claims from a queue that has controls set, in one transaction that
 * holds its `queues` row: the row lock makes claims of the queue take
 * turns, so the count of running jobs read after it (a new snapshot) is
 * exact and two workers can't both take the last free slot, and the token
 * bucket is spent by exactly what was claimed. `controlled` in the answer
 * says whether the queue still has controls set, so the store can send the
 * next claim of the queue straight here (or back to the one-statement
 * claim).
 *
 * ### SQL
 * ```sql
 * BEGIN;
 * SELECT paused, max_running, rate_limit, rate_period_ms, <tokens now> AS tokens
 *   FROM "stint"."queues" WHERE name = $1 FOR UPDATE;
 * <the claim, unguarded, LIMIT least($limit, floor(tokens), cap - (SELECT count(*) … state = 'running'))>;
 * UPDATE "stint"."queues" SET rate_tokens = $tokens - $claimed, rate_refilled_at = now() WHERE name = $1;  -- with a limit
 * COMMIT;
 * ```
 *
 * @example
 * ```ts
 * const { jobs } = await claimControlled(db, "stint", params, (trx, limit) => claimRows(trx, { ...params, limit }));
 * if (jobs.hold?.retryAfterMs != null) await sleep(jobs.hold.retryAfterMs);
 * ```
 */
export function claimControlled(
  db: Kysely<any>,
  schema: string,
  params: ClaimBatchParams,
  claimUnguarded: (trx: Transaction<any>, limit: number, runningCap: number | null) => Promise<ClaimedRow[]>,
): Promise<{ readonly jobs: ClaimedBatch; readonly controlled: boolean }> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ paused: boolean; max_running: number | null; rate_limit: number | null; rate_period_ms: number | null; tokens: number | null }>`
      SELECT paused, max_running, rate_limit, rate_period_ms,
             CASE WHEN rate_limit IS NULL THEN NULL ELSE ${TOKENS_NOW} END::float8 AS tokens
        FROM ${queuesTable(schema)} WHERE name = ${params.queue} FOR UPDATE`.execute(trx);
    const controls = rows[0];
    if (controls === undefined || (!controls.paused && controls.max_running === null && controls.rate_limit === null)) {
      return { jobs: claimedBatch(await claimUnguarded(trx, params.limit, null)), controlled: false };
    }
    if (controls.paused) return { jobs: claimedBatch([], { paused: true, retryAfterMs: null }), controlled: true };
    const tokens = controls.tokens;
    const room = tokens === null ? params.limit : Math.max(0, Math.min(params.limit, Math.floor(tokens)));
    const claimed = room === 0 ? [] : await claimUnguarded(trx, room, controls.max_running);
    if (tokens !== null) {
      await sql`UPDATE ${queuesTable(schema)} SET rate_tokens = ${tokens - claimed.length}::float8, rate_refilled_at = now()
        WHERE name = ${params.queue}`.execute(trx);
    }
    const rateBound = tokens !== null && room < params.limit && claimed.length === room;
    // Nothing claimed under a cap: held back if due jobs wait (a full cap), drained if none do.
    const capBound = claimed.length === 0 && room > 0 && controls.max_running !== null && (await anyDue(trx, schema, params.queue));
    const hold = rateBound || capBound ? holdOf(capBound, rateBound, tokens === null ? 0 : tokens - claimed.length, controls) : undefined;
    return { jobs: claimedBatch(claimed, hold), controlled: true };
  });
}

/** Why the claim took fewer than asked, if a control held it back; `undefined` otherwise. */
function holdOf(
  capped: boolean,
  limited: boolean,
  tokensLeft: number,
  controls: { readonly rate_limit: number | null; readonly rate_period_ms: number | null },
): ClaimHold | undefined {
  if (!capped && !limited) return undefined;
  const { rate_limit: limit, rate_period_ms: periodMs } = controls;
  const nextToken = limited && limit !== null && periodMs !== null ? Math.ceil(((1 - (tokensLeft - Math.floor(tokensLeft))) * periodMs) / limit) : 0;
  return { paused: false, retryAfterMs: Math.max(capped ? CAP_RETRY_MS : 0, nextToken, 1) };
}

async function anyDue(trx: Transaction<any>, schema: string, queue: string): Promise<boolean> {
  const { rows } = await sql<{ due: boolean }>`SELECT EXISTS (SELECT FROM ${sql.id(schema, "jobs")}
    WHERE queue = ${queue} AND state IN ('queued', 'failed') AND run_at <= now()) AS due`.execute(trx);
  return rows[0]?.due === true;
}

/**
 * Inserts or updates the controls of `queue`: only the fields `change`
 * names change (`null` removes a cap or a limit). A new or changed rate
 * limit starts with a full burst. The row's trigger wakes the queue's
 * workers.
 *
 * ### SQL
 * ```sql
 * INSERT INTO "stint"."queues" AS q (name, paused, max_running, rate_limit, rate_period_ms)
 * VALUES ($1, coalesce($2, false), $3, $4, $5)
 * ON CONFLICT (name) DO UPDATE SET <the fields given>, updated_at = now()
 * RETURNING name, paused, max_running, rate_limit, rate_period_ms, updated_at
 * ```
 *
 * @example
 * ```ts
 * await setQueueControls(db, "stint", "send-invoice", { paused: true });
 * ```
 */
export async function setQueueControls(db: Kysely<any>, schema: string, queue: string, change: QueueControlsChange): Promise<QueueControls> {
  const sets: RawBuilder<unknown>[] = [sql`updated_at = now()`];
  if (change.paused !== undefined) sets.push(sql`paused = ${change.paused}`);
  if (change.maxRunning !== undefined) sets.push(sql`max_running = ${change.maxRunning}::integer`);
  if (change.rateLimit !== undefined) {
    sets.push(sql`rate_limit = ${change.rateLimit?.limit ?? null}::integer, rate_period_ms = ${change.rateLimit?.periodMs ?? null}::integer`);
    sets.push(sql`rate_tokens = NULL, rate_refilled_at = NULL`);
  }
  const { rows } = await sql<ControlsRow>`INSERT INTO ${queuesTable(schema)} AS q (name, paused, max_running, rate_limit, rate_period_ms)
    VALUES (${queue}, ${change.paused ?? false}, ${change.maxRunning ?? null}::integer, ${change.rateLimit?.limit ?? null}::integer,
            ${change.rateLimit?.periodMs ?? null}::integer)
    ON CONFLICT (name) DO UPDATE SET ${sql.join(sets)}
    RETURNING ${CONTROL_COLUMNS}`.execute(db);
  return toQueueControls(rows[0]!);
}

/** Every queue's controls, by name. */
export async function listQueueControls(db: Kysely<any>, schema: string): Promise<readonly QueueControls[]> {
  const { rows } = await sql<ControlsRow>`SELECT ${CONTROL_COLUMNS} FROM ${queuesTable(schema)} ORDER BY name`.execute(db);
  return Object.freeze(rows.map(toQueueControls));
}

function toQueueControls(row: ControlsRow): QueueControls {
  return Object.freeze({
    queue: row.name,
    paused: row.paused,
    maxRunning: row.max_running,
    rateLimit: row.rate_limit === null || row.rate_period_ms === null ? null : Object.freeze({ limit: row.rate_limit, periodMs: row.rate_period_ms }),
    updatedAt: timestampValue(row.updated_at),
  });
}
