import type { AppDb } from "../app/app-tables";
import { MAX_DOCUMENT_CHARS } from "../workers/ai-summary-worker";
import { WEEKLY_INVOICING_REPORT } from "../workers/weekly-report-worker";

/** How much application data {@link seedDemoData} writes. */
export interface DemoDataSpec {
  /** Invoices 1…n, issued over the weeks below. */
  readonly invoices: number;
  /** Documents 1…n to summarise. */
  readonly documents: number;
  /** Ids of documents made longer than the model accepts. */
  readonly tooLongDocuments: readonly number[];
  /** The Mondays (`YYYY-MM-DD`) of the weeks the invoices are spread over, oldest first. */
  readonly weeks: readonly string[];
  /** Audit events spread over the last 180 days. */
  readonly auditEvents: number;
  /** Sessions expiring between 10 days ago and 10 days from now. */
  readonly sessions: number;
  /** Reports from two years ago, for the retention cleanup. */
  readonly oldReports: number;
  /** Monthly subscriptions of customers 1…n, running for years: the month-end workflow invoices them. */
  readonly subscriptions?: number;
  /** Random numbers in [0, 1) (seeded, so runs repeat). */
  readonly random: () => number;
}

const DAY_MS = 86_400_000;
const CURRENCIES = ["EUR", "EUR", "EUR", "USD", "GBP"];
const WORDS = (
  "the quarterly numbers show steady growth in subscriptions while churn fell after the pricing change " +
  "customers asked for faster exports and clearer invoices support tickets dropped by a third " +
  "the team shipped the new billing page and retired two legacy services on schedule"
).split(" ");

/**
 * Writes the example application's data for the demo: invoices, documents,
 * old and new audit events, expired and live sessions, and a few reports
 * old enough for the retention cleanup.
 *
 * @example
 * ```ts
 * await seedDemoData(db, { invoices: 200, documents: 60, tooLongDocuments: [13, 42], weeks, auditEvents: 1_500,
 *   sessions: 400, oldReports: 6, subscriptions: 5, random: seededRandom(7) });
 * ```
 */
export async function seedDemoData(db: AppDb, spec: DemoDataSpec): Promise<void> {
  const { random } = spec;
  const now = Date.now();
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

  const firstWeek = spec.weeks[0];
  if (firstWeek === undefined) throw new Error("weeks must name at least one Monday");
  const from = new Date(`${firstWeek}T00:00:00Z`).getTime();
  const span = spec.weeks.length * 7 * DAY_MS;
  if (spec.invoices > 0) {
    await db
      .insertInto("invoices")
      .values(
        Array.from({ length: spec.invoices }, (_, index) => ({
          id: index + 1,
          customer_email: `customer${index + 1}@example.com`,
          amount_cents: 1_000 + Math.floor(random() * 199_000),
          currency: pick(CURRENCIES),
          issued_at: new Date(from + Math.floor(((index + 0.5) / spec.invoices) * span)),
        })),
      )
      .execute();
  }

  if (spec.documents > 0) {
    const tooLong = new Set(spec.tooLongDocuments);
    await db
      .insertInto("documents")
      .values(
        Array.from({ length: spec.documents }, (_, index) => {
          const id = index + 1;
          const length = tooLong.has(id) ? MAX_DOCUMENT_CHARS + 5_000 : 300 + Math.floor(random() * 1_500);
          return { id, title: `Document ${id}`, body: prose(length, random) };
        }),
      )
      .execute();
  }

  if (spec.auditEvents > 0) {
    await db
      .insertInto("audit_events")
      .values(
        Array.from({ length: spec.auditEvents }, (_, index) => ({
          action: pick(["login", "logout", "invoice.viewed", "settings.changed"]),
          occurred_at: new Date(now - Math.floor((index / spec.auditEvents) * 180 * DAY_MS)),
        })),
      )
      .execute();
  }

  if (spec.sessions > 0) {
    await db
      .insertInto("sessions")
      .values(
        Array.from({ length: spec.sessions }, (_, index) => ({
          user_email: `user${index % 50}@example.com`,
          expires_at: new Date(now + Math.floor((index / spec.sessions - 0.5) * 20 * DAY_MS)),
        })),
      )
      .execute();
  }

  if ((spec.subscriptions ?? 0) > 0) {
    await db
      .insertInto("subscriptions")
      .values(
        Array.from({ length: spec.subscriptions ?? 0 }, (_, index) => ({
          customer_email: `customer${index + 1}@example.com`,
          monthly_cents: 900 + 1_000 * Math.floor(random() * 10),
          currency: pick(CURRENCIES),
          starts_on: "2020-01-01",
        })),
      )
      .execute();
  }

  if (spec.oldReports > 0) {
    await db
      .insertInto("reports")
      .values(
        Array.from({ length: spec.oldReports }, (_, index) => {
          const start = new Date(from - (104 - index) * 7 * DAY_MS).toISOString().slice(0, 10);
          return {
            kind: WEEKLY_INVOICING_REPORT,
            period_start: start,
            body: JSON.stringify({ weekStart: start, archived: true }),
            created_at: new Date(now - (730 - index * 7) * DAY_MS),
          };
        }),
      )
      .execute();
  }
}

function prose(length: number, random: () => number): string {
  const parts: string[] = [];
  let size = 0;
  while (size < length) {
    const sentence = Array.from({ length: 8 + Math.floor(random() * 10) }, () => WORDS[Math.floor(random() * WORDS.length)]).join(" ");
    const text = `${sentence.charAt(0).toUpperCase()}${sentence.slice(1)}.`;
    parts.push(text);
    size += text.length + 1;
  }
  return parts.join(" ");
}
