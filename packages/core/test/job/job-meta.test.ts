import { expect } from "chai";
import { PayloadError } from "../../src/errors/config-errors";
import { errorSummary } from "../../src/errors/coerce-error";
import { MAX_ERROR_MESSAGE, MAX_META_BYTES } from "../../src/limits";
import { buildNewJob } from "../../src/job/enqueue-options";
import { defineJob } from "../../src/job/job-definition";
import { serializeMeta } from "../../src/job/job-meta";
import { JobClient } from "../../src/client/job-client";
import { recordingStore, refusal } from "../support/recording-store";

const Report = defineJob<{ id: number }>("report");

describe("job meta", () => {
  it("serialises a plain object, and stores nothing for none or an empty one", () => {
    expect(serializeMeta({ tenant: "acme", tags: ["a"] })).to.equal('{"tenant":"acme","tags":["a"]}');
    expect(serializeMeta(undefined)).to.equal(null);
    expect(serializeMeta({})).to.equal(null);
  });

  it("refuses what is not a plain object of JSON values, naming meta", () => {
    expect(() => serializeMeta(["a"])).to.throw(PayloadError, "meta must be a plain object of JSON values, got an array");
    expect(() => serializeMeta("tenant")).to.throw(PayloadError, "got string");
    expect(() => serializeMeta({ at: new Date(0) })).to.throw(PayloadError, "meta.at");
    expect(() => serializeMeta({ n: Number.NaN })).to.throw(PayloadError, /^meta is not JSON-serialisable: meta\.n/);
  });

  it(`refuses meta over ${MAX_META_BYTES} bytes at enqueue with the size and the limit`, async () => {
    const { store, calls } = recordingStore();
    const error = await refusal(new JobClient(store).enqueue(Report, { id: 1 }, { meta: { note: "x".repeat(MAX_META_BYTES) } }));
    expect(calls).to.deep.equal([]);
    expect(error).to.be.instanceOf(PayloadError);
    expect(error.message).to.match(/^meta of queue "report" is 8203 bytes of JSON \(meta\), more than the limit of 8192 bytes$/);
    expect(error).to.include({ sizeBytes: 8_203, limitBytes: MAX_META_BYTES, path: "meta" });
  });

  it("travels from enqueue options into the new job", () => {
    expect(buildNewJob(Report, { id: 1 }, { meta: { requestId: "r-81" } }).metaJson).to.equal('{"requestId":"r-81"}');
    expect(buildNewJob(Report, { id: 1 }).metaJson).to.equal(null);
  });
});

describe("errorSummary", () => {
  it("keeps the error's own Name: message, without stack or causes", () => {
    expect(errorSummary(new TypeError("amount must be positive", { cause: new Error("deep") }))).to.equal("TypeError: amount must be positive");
    expect(errorSummary("plain text thrown")).to.equal("Error: plain text thrown");
  });

  it(`cuts at ${MAX_ERROR_MESSAGE} characters, scrubbed first and storable`, () => {
    const summary = errorSummary(new Error(`key sk_live_1 \u0000 ${"y".repeat(5_000)}`), (text) => text.replace("sk_live_1", "[redacted]"));
    expect(summary).to.have.length(MAX_ERROR_MESSAGE);
    expect(summary).to.match(/^Error: key \[redacted\] \\u0000 y+…$/);
  });
});
