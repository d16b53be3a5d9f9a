import { expect } from "chai";
import { z } from "zod";
import type { StandardSchemaV1 } from "@standard-schema/spec";
import { JobClient } from "../../src/client/job-client";
import { ConfigError, PayloadSchemaError } from "../../src/errors/config-errors";
import { ErrorCode } from "../../src/errors/error-codes";
import { ParseError } from "../../src/errors/job-errors";
import { hasErrorCode } from "../../src/errors/stint-error";
import { buildNewJob } from "../../src/job/enqueue-options";
import { defineJob, type ItemOf, type PayloadOf } from "../../src/job/job-definition";
import { parseWithSchema } from "../../src/job/payload-schema";
import type { JobStore, NewJob } from "../../src/store/job-store";
import { createSilentLogger } from "../../src/logging/create-logger";
import { SchemaQueueWorker } from "../../src/worker/schema-queue-worker";
import { AbstractQueueWorker } from "../../src/worker/abstract-queue-worker";

const SendWelcome = defineJob("send-welcome", {
  maxAttempts: 5,
  schema: z.object({ email: z.email(), name: z.string().min(1), tags: z.array(z.string()).default([]) }),
});

/** A store that records what would have been inserted. */
function recordingStore(): { store: JobStore; inserted: NewJob[] } {
  const inserted: NewJob[] = [];
  const store = {
    enqueue: async (job: NewJob) => {
      inserted.push(job);
      return { id: String(inserted.length), duplicate: false };
    },
    enqueueMany: async (jobs: readonly NewJob[]) => {
      inserted.push(...jobs);
      return jobs.map((_, index) => ({ id: String(index + 1), duplicate: false }));
    },
  };
  return { store: store as unknown as JobStore, inserted };
}

/** A hand-made Standard Schema whose validation is asynchronous (as a lookup-backed validator would be). */
function asyncPositiveId(): StandardSchemaV1<{ id: number }> {
  return {
    "~standard": {
      version: 1,
      vendor: "test",
      validate: async (value) => {
        await Promise.resolve();
        const id = (value as { id?: unknown } | null)?.id;
        if (typeof id === "number" && id > 0) return { value: { id } };
        return { issues: [{ message: "must be a positive number", path: [{ key: "id" }] }] };
      },
    },
  };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail("expected a rejection"),
    (error: unknown) => error,
  );
}

describe("defineJob with a schema", () => {
  it("keeps the schema on the frozen descriptor", () => {
    expect(SendWelcome.schema).to.not.equal(undefined);
    expect(Object.isFrozen(SendWelcome)).to.equal(true);
    expect(defineJob("plain").schema).to.equal(undefined);
  });

  it("refuses a schema that is not a Standard Schema validator, naming the option", () => {
    expect(() => defineJob("a", { schema: { parse: () => 1 } as never })).to.throw(ConfigError, "`schema`");
    expect(() => defineJob("a", { schema: { "~standard": { version: 2, validate: () => ({}) } } as never })).to.throw(ConfigError, "`schema`");
  });

  it("infers the payload type from the schema's input and the item type from its output", () => {
    const payload: PayloadOf<typeof SendWelcome> = { email: "ada@example.com", name: "Ada" }; // tags has a default
    const item: ItemOf<typeof SendWelcome> = { email: "ada@example.com", name: "Ada", tags: [] };
    expect(buildNewJob(SendWelcome, payload).payloadJson).to.equal('{"email":"ada@example.com","name":"Ada"}');
    expect(item.tags).to.deep.equal([]);
    // @ts-expect-error — a field of the wrong type does not compile.
    buildNewJob(SendWelcome, { email: "ada@example.com", name: 7 });
    // @ts-expect-error — the output type requires tags.
    const missing: ItemOf<typeof SendWelcome> = { email: "ada@example.com", name: "Ada" };
    expect(missing.name).to.equal("Ada");
  });

  it("lets the result type be named after the schema's type", () => {
    const schema = z.object({ imageId: z.number() });
    const Resize = defineJob<typeof schema, { width: number }>("resize", { schema });
    const payload: PayloadOf<typeof Resize> = { imageId: 7 };
    expect(payload.imageId).to.equal(7);
    // @ts-expect-error — imageId is a number.
    buildNewJob(Resize, { imageId: "7" });
  });
});

describe("enqueueing a job kind with a schema", () => {
  it("refuses a payload that fails it, inserting nothing and naming each field", async () => {
    const { store, inserted } = recordingStore();
    const error = await rejection(new JobClient(store).enqueue(SendWelcome, { email: "not-an-address", name: "" }));
    expect(error).to.be.instanceOf(PayloadSchemaError);
    expect(hasErrorCode(error, ErrorCode.Payload)).to.equal(true);
    const refused = error as PayloadSchemaError;
    expect(refused.issues.map((issue) => issue.path)).to.deep.equal(["payload.email", "payload.name"]);
    expect(refused.path).to.equal("payload.email");
    expect(refused.message).to.match(/^payload of queue "send-welcome" failed its schema: payload\.email: .+; payload\.name: .+/);
    expect(inserted).to.deep.equal([]);
  });

  it("names nested and array paths", async () => {
    const Order = defineJob("order", { schema: z.object({ lines: z.array(z.object({ sku: z.string() })) }) });
    const { store } = recordingStore();
    const error = (await rejection(new JobClient(store).enqueue(Order, { lines: [{ sku: "a" }, { sku: 3 as never }] }))) as PayloadSchemaError;
    expect(error.issues.map((issue) => issue.path)).to.deep.equal(["payload.lines[1].sku"]);
  });

  it("stores the payload as given when it passes (the worker validates it again)", async () => {
    const { store, inserted } = recordingStore();
    await new JobClient(store).enqueue(SendWelcome, { email: "ada@example.com", name: "Ada" });
    expect(inserted.map((job) => [job.queue, job.payloadJson, job.maxAttempts])).to.deep.equal([
      ["send-welcome", '{"email":"ada@example.com","name":"Ada"}', 5],
    ]);
  });

  it("refuses the whole batch of enqueueMany when one payload fails", async () => {
    const { store, inserted } = recordingStore();
    const client = new JobClient(store);
    const error = await rejection(
      client.enqueueMany(SendWelcome, [{ payload: { email: "a@example.com", name: "A" } }, { payload: { email: "b", name: "B" } }]),
    );
    expect(error).to.be.instanceOf(PayloadSchemaError);
    expect(inserted).to.deep.equal([]);
  });

  it("awaits an asynchronous validator", async () => {
    const Lookup = defineJob("lookup", { schema: asyncPositiveId() });
    const { store, inserted } = recordingStore();
    const client = new JobClient(store);
    const error = (await rejection(client.enqueue(Lookup, { id: -1 }))) as PayloadSchemaError;
    expect(error.issues).to.deep.equal([{ path: "payload.id", message: "must be a positive number" }]);
    expect(inserted).to.deep.equal([]);
    await client.enqueue(Lookup, { id: 4 });
    expect(inserted.map((job) => job.payloadJson)).to.deep.equal(['{"id":4}']);
  });
});

/** Exposes the worker's parse, as the executor calls it. */
class WelcomeWorker extends SchemaQueueWorker<ItemOf<typeof SendWelcome>> {
  readonly job = SendWelcome;
  parsed(payload: unknown): Promise<ItemOf<typeof SendWelcome>> {
    return this.parse(payload);
  }
  protected async processItem(): Promise<void> {}
}

describe("SchemaQueueWorker", () => {
  const worker = new WelcomeWorker(recordingStore().store, createSilentLogger());

  it("parses a stored payload into the schema's output", async () => {
    expect(await worker.parsed({ email: "ada@example.com", name: "Ada" })).to.deep.equal({ email: "ada@example.com", name: "Ada", tags: [] });
  });

  it("turns a failing payload into a ParseError carrying the validator's messages and paths", async () => {
    const error = await rejection(worker.parsed({ email: "ada@example.com", tags: [1] }));
    expect(error).to.be.instanceOf(ParseError);
    expect((error as Error).message).to.match(/^invalid payload: payload\.name: .+; payload\.tags\[0\]: .+/);
  });

  it("awaits an asynchronous validator", async () => {
    expect(await parseWithSchema(asyncPositiveId(), { id: 3 })).to.deep.equal({ id: 3 });
    const error = await rejection(parseWithSchema(asyncPositiveId(), { id: 0 }));
    expect((error as Error).message).to.equal("invalid payload: payload.id: must be a positive number");
  });

  it("does not compile for a job kind without a schema", () => {
    const Plain = defineJob<{ n: number }>("plain");
    class PlainWorker extends SchemaQueueWorker<{ n: number }> {
      // @ts-expect-error — a job kind without a schema needs AbstractQueueWorker and a parse.
      readonly job = Plain;
      protected async processItem(): Promise<void> {}
    }
    // @ts-expect-error — AbstractQueueWorker still needs parse.
    class NoParseWorker extends AbstractQueueWorker<{ n: number }> {
      readonly job = Plain;
      protected async processItem(): Promise<void> {}
    }
    expect([PlainWorker.name, NoParseWorker.name]).to.deep.equal(["PlainWorker", "NoParseWorker"]);
  });
});
