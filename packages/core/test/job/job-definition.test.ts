import { expect } from "chai";
import { defineJob, type PayloadOf } from "../../src/job/job-definition";
import { buildNewJob, type EnqueueOptions } from "../../src/job/enqueue-options";
import { JobClient } from "../../src/client/job-client";
import { recordingStore, refusal } from "../support/recording-store";
import { ConfigError, InvalidNameError, PayloadError } from "../../src/errors/config-errors";
import { DEFAULT_MAX_PAYLOAD_BYTES } from "../../src/limits";

interface SendInvoice {
  invoiceId: number;
}
const SendInvoice = defineJob<SendInvoice>("send-invoice", { maxAttempts: 10, timeoutMs: 30_000 });

describe("defineJob", () => {
  it("carries the queue name and frozen defaults", () => {
    expect(SendInvoice.name).to.equal("send-invoice");
    expect(SendInvoice.defaults).to.deep.equal({ maxAttempts: 10, timeoutMs: 30_000, priority: 0 });
    expect(Object.isFrozen(SendInvoice)).to.equal(true);
    expect(Object.isFrozen(SendInvoice.defaults)).to.equal(true);
  });

  it("refuses queue names that are not plain", () => {
    for (const name of ["", "Send Invoice", "a;drop", "-x", "x".repeat(129)]) {
      expect(() => defineJob(name), JSON.stringify(name)).to.throw(InvalidNameError);
    }
  });

  it("names the default it refuses", () => {
    expect(() => defineJob("a", { maxAttempts: 0 })).to.throw(ConfigError, "maxAttempts");
    expect(() => defineJob("a", { timeoutMs: -5 })).to.throw(ConfigError, "timeoutMs");
    expect(() => defineJob("a", { priority: 1.5 })).to.throw(ConfigError, "priority");
    expect(() => defineJob("a", { retries: 3 } as never)).to.throw(ConfigError, "defaults.retries");
  });

  it("types payloads at compile time", () => {
    const payload: PayloadOf<typeof SendInvoice> = { invoiceId: 812 };
    expect(buildNewJob(SendInvoice, payload).payloadJson).to.equal('{"invoiceId":812}');
    // @ts-expect-error — a wrong payload shape does not compile.
    buildNewJob(SendInvoice, { invoice: "812" });
  });
});

describe("buildNewJob", () => {
  it("takes the kind's defaults and lets enqueue options override them", () => {
    const job = buildNewJob(SendInvoice, { invoiceId: 1 }, { priority: 5, delayMs: 1_000, dedupeKey: "invoice:1" });
    expect(job).to.include({ queue: "send-invoice", maxAttempts: 10, timeoutMs: 30_000, priority: 5, delayMs: 1_000, dedupeKey: "invoice:1" });
    expect(buildNewJob(SendInvoice, { invoiceId: 1 }, { timeoutMs: null }).timeoutMs).to.equal(null);
  });

  it("names an option it does not know", () => {
    expect(() => buildNewJob(SendInvoice, { invoiceId: 1 }, { delay: 5 } as never)).to.throw(ConfigError, "enqueue.delay");
  });

  it("leaves the option values to the store, which refuses a bad one by its name before anything is written", async () => {
    const { store, calls } = recordingStore();
    const client = new JobClient(store);
    const cases: [EnqueueOptions, string][] = [
      [{ delayMs: -1 }, "delayMs"],
      [{ runAt: new Date("nope") }, "runAt"],
      [{ dedupeKey: "" }, "dedupeKey"],
      [{ priority: 1e6 }, "priority"],
      [{ maxAttempts: 0 }, "maxAttempts"],
      [{ timeoutMs: 0 }, "timeoutMs"],
    ];
    for (const [options, option] of cases) {
      expect(await refusal(client.enqueue(SendInvoice, { invoiceId: 1 }, options)), option)
        .to.be.instanceOf(ConfigError)
        .with.property("option", option);
    }
    expect(calls).to.deep.equal([]);
  });
});

describe("a job kind's maxPayloadBytes", () => {
  const Small = defineJob<{ text: string }>("small", { maxPayloadBytes: 32 });

  it("defaults to 1 MiB and is validated", () => {
    expect(defineJob("plain").maxPayloadBytes).to.equal(DEFAULT_MAX_PAYLOAD_BYTES);
    expect(() => defineJob("a", { maxPayloadBytes: 0 })).to.throw(ConfigError, "maxPayloadBytes");
    expect(() => defineJob("a", { maxPayloadBytes: 1.5 })).to.throw(ConfigError, "maxPayloadBytes");
  });

  it("refuses a bigger payload with a PayloadError naming the queue, the size and the limit", () => {
    const text = "x".repeat(32 - '{"text":""}'.length);
    expect(buildNewJob(Small, { text }).payloadJson).to.have.length(32);
    expect(() => buildNewJob(Small, { text: `${text}x` })).to.throw(
      PayloadError,
      'payload of queue "small" is 33 bytes of JSON, more than the limit of 32 bytes',
    );
  });
});

describe("a job kind's deadLetterQueue", () => {
  const Refund = defineJob<{ id: number }>("refund", { deadLetterQueue: "refund-dead" });

  it("names the queue in every job's meta, beside the enqueue's own meta", () => {
    expect(Refund.deadLetterQueue).to.equal("refund-dead");
    const job = buildNewJob(Refund, { id: 1 }, { meta: { tenant: "acme" } });
    expect(JSON.parse(job.metaJson!)).to.deep.equal({ tenant: "acme", "stint.deadLetterQueue": "refund-dead" });
    expect(buildNewJob(SendInvoice, { invoiceId: 1 }).metaJson, "a kind without one adds nothing").to.equal(null);
  });

  it("refuses a name no queue may have, or the kind's own, naming the setting", () => {
    expect(() => defineJob("refund", { deadLetterQueue: "Refund Dead" })).to.throw(ConfigError, "deadLetterQueue");
    expect(() => defineJob("refund", { deadLetterQueue: 7 as never })).to.throw(ConfigError, "deadLetterQueue");
    expect(() => defineJob("refund", { deadLetterQueue: "refund" })).to.throw(ConfigError, /deadLetterQueue.*another queue/);
  });

  it("is checked by the store in a hand-built job's meta too, before anything is written", async () => {
    const { store, calls } = recordingStore();
    const client = new JobClient(store);
    expect(await refusal(client.enqueue(SendInvoice, { invoiceId: 1 }, { meta: { "stint.deadLetterQueue": "x y" } })))
      .to.be.instanceOf(ConfigError)
      .with.property("option", "deadLetterQueue");
    expect(calls).to.deep.equal([]);
  });
});
