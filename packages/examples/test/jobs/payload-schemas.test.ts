import { expect } from "chai";
import { sql } from "kysely";
import { createSilentLogger, ErrorCode, JobClient, PayloadSchemaError, resolveWorkers, type SchemaJobDefinition } from "@stint/core";
import { createCompositionRoot } from "../../src/composition-root";
import { insertWithSql } from "../../src/demo/malformed-payloads";
import { AiSummary } from "../../src/jobs/ai-summary";
import { NightlyCleanup } from "../../src/jobs/nightly-cleanup";
import { SendInvoiceEmail } from "../../src/jobs/send-invoice-email";
import { SendReportEmail } from "../../src/jobs/send-report-email";
import { WeeklyReport } from "../../src/jobs/weekly-report";
import { EXAMPLE_SCHEDULES } from "../../src/schedules";
import { createAppFixture, jobRow, untyped, type AppFixture } from "../support/app-fixture";

/** Any of the example kinds (their payload types differ; these tests send payloads of every shape). */
type AnyKind = SchemaJobDefinition<never, unknown, unknown>;

const KINDS: readonly AnyKind[] = [SendInvoiceEmail, SendReportEmail, WeeklyReport, NightlyCleanup, AiSummary];

/** A payload its kind's schema refuses, and what the schema says: each field named, with its message. */
interface Refused {
  readonly kind: AnyKind;
  readonly payload: unknown;
  readonly issues: readonly string[];
}

const REFUSED: readonly Refused[] = [
  { kind: SendInvoiceEmail, payload: { invoiceId: "abc" }, issues: ["payload.invoiceId: Invalid input: expected number, received string"] },
  { kind: SendInvoiceEmail, payload: { invoiceId: 0 }, issues: ["payload.invoiceId: Too small: expected number to be >0"] },
  { kind: SendInvoiceEmail, payload: { invoiceId: 2_147_483_648 }, issues: ["payload.invoiceId: Too big: expected number to be <=2147483647"] },
  {
    kind: SendInvoiceEmail,
    payload: { invoice_id: 17 },
    issues: ["payload.invoiceId: Invalid input: expected number, received undefined", 'payload: Unrecognized key: "invoice_id"'],
  },
  { kind: SendInvoiceEmail, payload: "812", issues: ["payload: Invalid input: expected object, received string"] },
  { kind: SendReportEmail, payload: { reportId: 3, recipient: "finance" }, issues: ["payload.recipient: Invalid email address"] },
  { kind: WeeklyReport, payload: { weekStart: "2025-13-01", recipient: "finance@example.com" }, issues: ["payload.weekStart: Invalid ISO date"] },
  { kind: WeeklyReport, payload: { weekStart: "2025-02-30", recipient: "finance@example.com" }, issues: ["payload.weekStart: Invalid ISO date"] },
  { kind: WeeklyReport, payload: { weekStart: "2025-06-04", recipient: "finance@example.com" }, issues: ["payload.weekStart: Not a Monday"] },
  {
    kind: NightlyCleanup,
    payload: { target: "users", olderThanDays: 1 },
    issues: ['payload.target: Invalid option: expected one of "audit-events"|"expired-sessions"|"old-reports"'],
  },
  {
    kind: NightlyCleanup,
    payload: { target: "audit-events", olderThanDays: 1, batchSize: 0 },
    issues: ["payload.batchSize: Too small: expected number to be >=1"],
  },
  { kind: AiSummary, payload: { documentId: null }, issues: ["payload.documentId: Invalid input: expected number, received null"] },
  { kind: AiSummary, payload: { documentId: 1, maxWords: 1 }, issues: ["payload.maxWords: Too small: expected number to be >=5"] },
];

/** What the kind's schema makes of `payload`: its output, or its issues as `path: message`. */
async function validate(kind: AnyKind, payload: unknown): Promise<{ value?: unknown; issues?: string[] }> {
  const result = await kind.schema["~standard"].validate(payload);
  if (result.issues === undefined) return { value: result.value };
  return { issues: result.issues.map((issue) => `${["payload", ...(issue.path ?? []).map(String)].join(".")}: ${issue.message}`) };
}

describe("the example job kinds' schemas", () => {
  it("accept well-formed payloads and fill in the defaults", async () => {
    expect(await validate(SendInvoiceEmail, { invoiceId: 812 })).to.deep.equal({ value: { invoiceId: 812 } });
    expect(await validate(SendReportEmail, { reportId: 3, recipient: "finance@example.com" })).to.deep.equal({
      value: { reportId: 3, recipient: "finance@example.com" },
    });
    expect(await validate(WeeklyReport, { weekStart: "2025-06-02", recipient: "finance@example.com" })).to.deep.equal({
      value: { weekStart: "2025-06-02", recipient: "finance@example.com" },
    });
    expect(await validate(WeeklyReport, { recipient: "finance@example.com" })).to.deep.equal({ value: { recipient: "finance@example.com" } });
    expect(await validate(NightlyCleanup, { target: "expired-sessions", olderThanDays: 1 })).to.deep.equal({
      value: { target: "expired-sessions", olderThanDays: 1, batchSize: 500 },
    });
    expect(await validate(AiSummary, { documentId: 7 })).to.deep.equal({ value: { documentId: 7, maxWords: 60 } });
  });

  it("refuse malformed payloads, naming each field that fails", async () => {
    for (const { kind, payload, issues } of REFUSED) {
      expect(await validate(kind, payload), `${kind.name} ${JSON.stringify(payload)}`).to.deep.equal({ issues });
    }
  });

  it("accept the payload of every example schedule", async () => {
    for (const { spec } of EXAMPLE_SCHEDULES) {
      const kind = KINDS.find((candidate) => candidate.name === spec.queue)!;
      expect((await validate(kind, JSON.parse(spec.payloadJson))).issues, spec.name).to.equal(undefined);
    }
  });
});

describe("the example job kinds' schemas, against PostgreSQL", () => {
  let app: AppFixture;

  beforeEach(async () => {
    app = await createAppFixture();
  });
  afterEach(async () => {
    await app.drop();
  });

  async function jobCount(): Promise<number> {
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.id(app.test.schema, "all_jobs")}`.execute(app.test.db);
    return rows[0]!.n;
  }

  it("refuse a malformed payload at enqueue, naming the field, and insert nothing", async () => {
    const client = new JobClient(app.store);
    for (const { kind, payload, issues } of REFUSED) {
      const refusal = await client.enqueue(untyped(kind), payload).catch((thrown: unknown) => thrown);
      expect(refusal, `${kind.name} ${JSON.stringify(payload)}`).to.be.instanceOf(PayloadSchemaError);
      expect((refusal as PayloadSchemaError).message).to.equal(`payload of queue "${kind.name}" failed its schema: ${issues.join("; ")}`);
    }
    expect(await jobCount()).to.equal(0);
  });

  it("send a malformed payload written with SQL, as an older producer would, to dead at its first claim with the same message", async () => {
    const ids = await insertWithSql(
      app.test.db,
      app.test.schema,
      REFUSED.map(({ kind, payload }) => ({ kind: untyped(kind), payload })),
    );
    const root = createCompositionRoot({ connectionString: app.test.connectionString, schema: app.test.schema, logger: { logger: createSilentLogger() } });
    try {
      for (const worker of resolveWorkers(root.container)) await worker.start();
    } finally {
      await root.close();
    }

    for (const [index, { kind, payload, issues }] of REFUSED.entries()) {
      const job = await jobRow(app.store, ids[index]!);
      expect(job, `${kind.name} ${JSON.stringify(payload)}`).to.include({ queue: kind.name, state: "dead", attempts: 1, errorCode: ErrorCode.Parse });
      expect(job.lastError?.split("\n")[0]).to.equal(`ParseError: invalid payload: ${issues.join("; ")}`);
    }
    expect(await app.db.selectFrom("sent_emails").selectAll().execute(), "e-mails sent").to.deep.equal([]);
    expect(await app.db.selectFrom("reports").selectAll().execute(), "reports built").to.deep.equal([]);
  });
});
