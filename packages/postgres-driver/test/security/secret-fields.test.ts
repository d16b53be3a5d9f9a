import {
  AbstractQueueWorker,
  defineJob,
  JobClient,
  PermanentError,
  type JobContext,
  type JobDefinition,
  type JobStore,
  type LogFields,
  type Logger,
} from "@stint/core";
import { REDACTED } from "@stint/core/internal";
import { expect } from "chai";
import { createTestSchema, type TestSchema } from "../../src/testing";

interface Charge {
  readonly orderId: number;
  readonly apiKey: string;
  readonly card: { readonly number: string; readonly cvc: number };
}

const ChargeCard = defineJob<Charge>("charge-card", { maxAttempts: 2, secretFields: ["apiKey", "card.number", "card.cvc"] });

const PAYLOAD: Charge = { orderId: 812, apiKey: "sk_live_51HxQe", card: { number: "4242424242424242", cvc: 737 } };
const SECRETS = ["sk_live_51HxQe", "4242424242424242", "737"];

/** Everything written to a logger, children included, as one JSON text per line. */
function capturingLogger(lines: string[], base: LogFields = {}): Logger {
  const write = (level: string) => (message: string, fields?: LogFields) => {
    lines.push(JSON.stringify({ level, message, ...base, ...fields }));
  };
  return {
    error: write("error"),
    warn: write("warn"),
    info: write("info"),
    debug: write("debug"),
    child: (fields) => capturingLogger(lines, { ...base, ...fields }),
  };
}

/** A real worker whose handler leaks the card the ways real handlers do. */
class ChargeWorker extends AbstractQueueWorker<Charge> {
  readonly job: JobDefinition<Charge> = ChargeCard;
  readonly #leak: "throw" | "parse" | "permanent";

  constructor(store: JobStore, log: Logger, leak: "throw" | "parse" | "permanent") {
    super(store, log, { backoff: { baseMs: 0, maxMs: 0 } });
    this.#leak = leak;
  }

  protected parse(payload: unknown): Charge {
    const charge = payload as Charge;
    if (this.#leak === "parse")
      throw new Error(`card.number must be 15 digits, got ${JSON.stringify(charge.card.number)} (payload ${JSON.stringify(payload)})`);
    return charge;
  }

  protected async processItem(item: Charge, ctx: JobContext): Promise<unknown> {
    ctx.log.info(`Charging card ${item.card.number} with key ${item.apiKey}`, { card: item.card, orderId: item.orderId });
    const upstream = new Error(`402 from the gateway: card ${item.card.number} cvc ${item.card.cvc} declined for key ${item.apiKey}`);
    if (this.#leak === "permanent") throw new PermanentError(`order ${item.orderId} cannot be charged`, { cause: upstream });
    throw upstream;
  }
}

describe("secret payload fields", () => {
  let t: TestSchema;

  beforeEach(async () => {
    t = await createTestSchema({ maxConnections: 4 });
  });
  afterEach(async () => {
    await t.drop();
  });

  async function run(leak: "throw" | "parse" | "permanent"): Promise<{ readonly lastError: string; readonly lines: string[] }> {
    const { id } = await new JobClient(t.store).enqueue(ChargeCard, PAYLOAD);
    const lines: string[] = [];
    await new ChargeWorker(t.store, capturingLogger(lines), leak).start();
    const job = await t.store.getJob({ id });
    expect(job?.state).to.equal("dead");
    // The attempt's history keeps the same error, redacted the same way.
    const attempts = await t.store.listAttempts({ jobId: id });
    expect(attempts.at(-1)?.outcome).to.equal("dead");
    for (const attempt of attempts) expectNoSecret(JSON.stringify(attempt.error), "the attempt's history record");
    return { lastError: job?.lastError ?? "", lines };
  }

  function expectNoSecret(text: string, where: string): void {
    for (const secret of SECRETS) expect(text, where).not.to.include(secret);
  }

  it("keeps them out of last_error and every log line when the handler's error repeats them", async () => {
    const { lastError, lines } = await run("throw");
    expectNoSecret(lastError, "last_error");
    expect(lastError).to.include(`402 from the gateway: card ${REDACTED} cvc ${REDACTED} declined for key ${REDACTED}`);
    expect(lines.length).to.be.greaterThan(3);
    for (const line of lines) expectNoSecret(line, line);
    expect(lines.join("\n")).to.include(`Charging card ${REDACTED} with key ${REDACTED}`);
    expect(lines.join("\n")).to.include('"orderId":812');
  });

  it("redacts them from an error's causes", async () => {
    const { lastError, lines } = await run("permanent");
    expect(lastError).to.include("order 812 cannot be charged").and.to.include("Caused by: Error: 402 from the gateway");
    expectNoSecret(lastError, "last_error");
    for (const line of lines) expectNoSecret(line, line);
  });

  it("redacts them from a parse error that echoes the payload, in JSON form too", async () => {
    const { lastError, lines } = await run("parse");
    expect(lastError).to.include(`card.number must be 15 digits, got "${REDACTED}"`);
    expectNoSecret(lastError, "last_error");
    for (const line of lines) expectNoSecret(line, line);
  });

  it("stores the payload itself unchanged", async () => {
    const { id } = await new JobClient(t.store).enqueue(ChargeCard, PAYLOAD);
    expect((await t.store.getJob({ id }))?.payload).to.deep.equal(PAYLOAD);
  });
});
