import { expect } from "chai";
import { parseAiSummary } from "../../src/jobs/ai-summary";
import { parseNightlyCleanup } from "../../src/jobs/nightly-cleanup";
import { parseSendInvoiceEmail } from "../../src/jobs/send-invoice-email";
import { ValidationError } from "../../src/jobs/validation-error";
import { parseWeeklyReport } from "../../src/jobs/weekly-report";

function failure(parse: () => unknown): ValidationError {
  try {
    parse();
  } catch (thrown) {
    expect(thrown).to.be.instanceOf(ValidationError);
    return thrown as ValidationError;
  }
  throw new Error("expected the payload to be refused");
}

describe("payload parsers", () => {
  it("accept well-formed payloads and fill in defaults", () => {
    expect(parseSendInvoiceEmail({ invoiceId: 812 })).to.deep.equal({ invoiceId: 812 });
    expect(parseWeeklyReport({ weekStart: "2025-06-02", recipient: "finance@example.com" })).to.deep.equal({
      weekStart: "2025-06-02",
      recipient: "finance@example.com",
    });
    expect(parseNightlyCleanup({ target: "expired-sessions", olderThanDays: 1 })).to.deep.equal({
      target: "expired-sessions",
      olderThanDays: 1,
      batchSize: 500,
    });
    expect(parseAiSummary({ documentId: 7 })).to.deep.equal({ documentId: 7, maxWords: 60 });
  });

  it("name the failing field and show the value they got", () => {
    const error = failure(() => parseSendInvoiceEmail({ invoiceId: "abc" }));
    expect(error.message).to.equal('invoiceId must be a positive integer, got "abc"');
    expect(error.field).to.equal("invoiceId");
    expect(error.name).to.equal("ValidationError");

    expect(failure(() => parseSendInvoiceEmail({ invoiceId: -3 })).message).to.equal("invoiceId must be a positive integer, got -3");
    expect(failure(() => parseSendInvoiceEmail({})).message).to.equal("invoiceId must be a positive integer, got nothing");
    expect(failure(() => parseAiSummary({ documentId: null })).message).to.equal("documentId must be a positive integer, got null");
    expect(failure(() => parseAiSummary({ documentId: 1, maxWords: 1 })).field).to.equal("maxWords");
  });

  it("refuse payloads that are not objects and fields nobody declared", () => {
    expect(failure(() => parseSendInvoiceEmail("812")).message).to.equal('payload must be an object, got "812"');
    expect(failure(() => parseSendInvoiceEmail([812])).field).to.equal("payload");
    expect(failure(() => parseSendInvoiceEmail({ invoice_id: 17 })).message).to.equal(
      "invoice_id is not a known field (known: invoiceId), got 17",
    );
  });

  it("check dates: written YYYY-MM-DD, existing, and a Monday for weekly reports", () => {
    const recipient = "finance@example.com";
    expect(failure(() => parseWeeklyReport({ weekStart: "last monday", recipient })).message).to.equal(
      'weekStart must be a date written YYYY-MM-DD, got "last monday"',
    );
    expect(failure(() => parseWeeklyReport({ weekStart: "2025-02-30", recipient })).message).to.equal(
      'weekStart must be a date that exists, got "2025-02-30"',
    );
    expect(failure(() => parseWeeklyReport({ weekStart: "2025-06-04", recipient })).message).to.equal(
      'weekStart must be a Monday, got "2025-06-04"',
    );
  });

  it("take cleanup targets from an allow-list only", () => {
    expect(failure(() => parseNightlyCleanup({ target: "users", olderThanDays: 1 })).message).to.equal(
      'target must be one of "audit-events", "expired-sessions", "old-reports", got "users"',
    );
    expect(failure(() => parseNightlyCleanup({ target: "audit-events", olderThanDays: 1, batchSize: 0 })).field).to.equal("batchSize");
  });
});
