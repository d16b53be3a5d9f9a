import { expect } from "chai";
import { createSilentLogger } from "@stint/core";
import { InMemoryJobStore, ManualClock, runJob } from "@stint/core/testing";
import { ImportFileWorker } from "../../src/workers/import-file-worker";

describe("ImportFileWorker", () => {
  const worker = new ImportFileWorker(new InMemoryJobStore(), createSilentLogger());

  it("copies the file, keeps the upload id in the job's meta and logs each step", async () => {
    const clock = new ManualClock();
    const outcome = await runJob(worker, { url: "https://files.example/orders.csv" }, { clock, meta: { tenant: "acme" } });
    expect(outcome.status).to.equal("succeeded");
    const uploadId = outcome.meta["uploadId"];
    expect(outcome.meta).to.deep.equal({ tenant: "acme", uploadId });
    expect(outcome.logs.map((line) => [line.message, line.fields])).to.deep.equal([
      ["Copied the file to storage", { uploadId }],
      ["Imported 32 rows", null],
    ]);
    expect(outcome.logs[0]?.at).to.deep.equal(new Date(clock.now()));
  });

  it("skips the copy on an attempt whose meta holds an upload id", async () => {
    const first = await runJob(worker, { url: "https://files.example/orders.csv" });
    const again = await runJob(worker, { url: "https://files.example/orders.csv" }, { attempt: 2, meta: first.meta });
    expect(again.logs[0]?.message).to.equal("The file was copied by an earlier attempt");
    expect(again.meta).to.deep.equal(first.meta);
  });
});
