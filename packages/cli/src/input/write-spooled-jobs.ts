import { ExitCode, type JobStore } from "@stint/core";
import type { NewJob } from "@stint/core/driver";
import { CliError } from "../cli-error";
import type { CommandContext } from "../command";
import type { Connection } from "../connection/open-connection";
import { startProgress } from "../output/progress";
import type { SpoolFile } from "./spool-file";

/** Rows per `enqueueMany` statement with `--file`. */
export const ENQUEUE_BATCH_SIZE = 1_000;

/** Why the write of a file stopped early: an interrupt (exit 130, nothing enqueued). */
export const INTERRUPTED = Symbol("interrupted");

/** Thrown inside the transaction to roll it back on an interrupt. */
class Interruption extends Error {}

/**
 * Writes the spooled rows 1,000 per statement in one transaction, which
 * commits only when every validated line was read back and written (else a
 * failure, exit 1, and nothing is enqueued). Interrupts are honoured between
 * statements by rolling back: then it resolves to {@link INTERRUPTED}.
 * Each row is `template` with a spooled payload.
 *
 * @example
 * ```ts
 * const counts = await writeSpooledJobs(context, await context.connect(), spool, template, 1_048_576);
 * ```
 */
export async function writeSpooledJobs(
  context: CommandContext,
  { store, db }: Connection,
  spool: SpoolFile,
  template: NewJob,
  maxPayloadBytes: number,
): Promise<{ enqueued: number; duplicates: number } | typeof INTERRUPTED> {
  const total = spool.count;
  const progress = startProgress(context.io.stderr, { label: `enqueue ${template.queue}`, total, unit: "jobs" });
  try {
    return await db.transaction().execute(async (transaction) => {
      const counts = { enqueued: 0, duplicates: 0 };
      let batch: NewJob[] = [];
      let read = 0;
      for await (const payloadJson of spool.lines(maxPayloadBytes)) {
        batch.push({ ...template, payloadJson });
        read += 1;
        if (batch.length < ENQUEUE_BATCH_SIZE && read < total) continue;
        await writeBatch(store, batch, counts, transaction);
        batch = [];
        progress.update(counts.enqueued + counts.duplicates);
        if (context.signal.aborted && read < total) throw new Interruption("interrupted between statements");
      }
      if (batch.length > 0) await writeBatch(store, batch, counts, transaction);
      const written = counts.enqueued + counts.duplicates;
      if (read !== total || written !== total) {
        throw new CliError(ExitCode.Failure, `validated ${total} lines but read back ${read} and wrote ${written}; rolled back, nothing was enqueued`);
      }
      return counts;
    });
  } catch (thrown) {
    if (thrown instanceof Interruption) return INTERRUPTED;
    throw thrown;
  } finally {
    progress.stop();
  }
}

async function writeBatch(store: JobStore, batch: readonly NewJob[], counts: { enqueued: number; duplicates: number }, transaction: unknown): Promise<void> {
  const results = await store.enqueueMany(batch, transaction);
  for (const result of results) {
    if (result.duplicate) counts.duplicates += 1;
    else counts.enqueued += 1;
  }
}
