import { AbstractQueueWorker, defineJob, JOB_STORE, LOGGER, type JobContext, type JobStore, type Logger } from "@stint/core";
import { inject, injectable } from "tsyringe";
import { copyToStorage, importRows } from "../services/file-storage";

/** Payload of an `import-file` job: the file to import. */
export interface ImportFile {
  readonly url: string;
}

/** The `import-file` job kind: two steps, the first of which a retry must not repeat. */
export const ImportFileJob = defineJob<ImportFile>("import-file", { maxAttempts: 5 });

/**
 * Copies a file to storage, then imports its rows. It writes to its job as
 * it goes: log lines (`ctx.log`) that `stint jobs show` and the dashboard
 * show per attempt, and the upload id in the job's meta (`ctx.updateMeta`),
 * so that an attempt after a failed import skips the copy.
 */
@injectable()
export class ImportFileWorker extends AbstractQueueWorker<ImportFile> {
  readonly job = ImportFileJob;

  constructor(@inject(JOB_STORE) store: JobStore, @inject(LOGGER) log: Logger) {
    super(store, log);
  }

  protected override parse(payload: unknown): ImportFile {
    const url = (payload as { url?: unknown } | null)?.url;
    if (typeof url !== "string") throw new TypeError("payload.url must be a string");
    return { url };
  }

  protected override async processItem(item: ImportFile, ctx: JobContext): Promise<{ rows: number }> {
    let uploadId = ctx.meta["uploadId"];
    if (typeof uploadId === "string") {
      ctx.log("The file was copied by an earlier attempt", { uploadId });
    } else {
      uploadId = await copyToStorage(item.url, ctx.signal);
      ctx.log("Copied the file to storage", { uploadId });
      // Stored at once: if a later step fails, the next attempt skips the copy.
      await ctx.updateMeta({ uploadId });
    }
    const rows = await importRows(uploadId, ctx.signal);
    ctx.log(`Imported ${rows} rows`);
    return { rows };
  }
}
