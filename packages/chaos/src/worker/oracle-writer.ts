import { randomUUID } from "node:crypto";
import pg from "pg";

/** How long a write keeps trying through a server restart before the handler gives up. */
const WRITE_DEADLINE_MS = 60_000;

/**
 * The worker side of the oracle: records each handler run (and each run of
 * an effect's body) in the scenario's `chaos_executions` and
 * `chaos_effect_runs` tables on its own small pool, outside any stint
 * connection and in autocommit, so a record survives the kill of the
 * process, the rollback of the job's transaction and the termination of
 * every stint connection. Each record carries a random token, so a write
 * retried after a dropped connection is stored once.
 */
export class OracleWriter {
  readonly #pool: pg.Pool;
  readonly #schema: string;

  /** `connections`: enough that a handler's record is not queued behind others' (it stamps the time it runs). */
  constructor(connectionString: string, schema: string, connections: number) {
    this.#schema = schema;
    this.#pool = new pg.Pool({ connectionString, max: connections, application_name: `chaos:oracle:${process.pid}` });
    // A connection killed while idle (a server restart) is discarded by the pool; the next write reconnects.
    this.#pool.on("error", () => undefined);
  }

  /**
   * Records that a handler started an attempt, and whether the job's
   * outbox marker (written in the enqueuing transaction, if any) was visible then.
   * Resolves with the run's token, for {@link recordEnd}.
   */
  async recordStart(run: {
    readonly jobId: string;
    readonly seq: number;
    readonly attempt: number;
    readonly workerId: string;
    readonly action: string;
  }): Promise<string> {
    const table = `"${this.#schema}".chaos_executions`;
    const outbox = `"${this.#schema}".chaos_outbox`;
    const token = randomUUID();
    await this.#write(
      `INSERT INTO ${table} (token, job_id, seq, attempt, worker_id, pid, action, marker_visible)
       VALUES ($1, $2, $3, $4, $5, $6, $7, EXISTS (SELECT 1 FROM ${outbox} WHERE seq = $3))
       ON CONFLICT (token) DO NOTHING`,
      [token, run.jobId, run.seq, run.attempt, run.workerId, process.pid, run.action],
    );
    return token;
  }

  /**
   * Records when the run `token` ended and how (`done`, or the code of the
   * abort it observed): `at` is the local time it happened (`Date.now()`),
   * the same clock as the server's on this machine.
   */
  async recordEnd(token: string, at: number, how: string): Promise<void> {
    await this.#write(`UPDATE "${this.#schema}".chaos_executions SET ended_at = to_timestamp($2::float8 / 1000), ended_how = $3 WHERE token = $1`, [
      token,
      at,
      how,
    ]);
  }

  /** Records one run of an effect's body: what an external side effect would have seen. */
  async recordEffectRun(run: { readonly jobId: string; readonly seq: number; readonly attempt: number }): Promise<void> {
    await this.#write(`INSERT INTO "${this.#schema}".chaos_effect_runs (token, job_id, seq, attempt) VALUES ($1, $2, $3, $4) ON CONFLICT (token) DO NOTHING`, [
      randomUUID(),
      run.jobId,
      run.seq,
      run.attempt,
    ]);
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }

  async #write(text: string, values: readonly unknown[]): Promise<void> {
    const deadline = Date.now() + WRITE_DEADLINE_MS;
    for (let delayMs = 50; ; delayMs = Math.min(delayMs * 2, 1_000)) {
      try {
        await this.#pool.query(text, [...values]);
        return;
      } catch (thrown) {
        if (Date.now() + delayMs > deadline) throw thrown;
        await new Promise((resolve) => setTimeout(resolve, delayMs));
      }
    }
  }
}
