import { expect } from "chai";
import { container as rootContainer, inject, injectable } from "tsyringe";
import { AbstractQueueWorker } from "../../src/worker/abstract-queue-worker";
import { defineJob } from "../../src/job/job-definition";
import { JOB_STORE, LOGGER } from "../../src/di/tokens";
import { registerLogger, registerWorkers, resolveWorker, resolveWorkers } from "../../src/di/register-core";
import type { JobStore } from "../../src/store/job-store";
import type { Logger } from "../../src/logging/logger";
import { ConfigError } from "../../src/errors/config-errors";

const Ping = defineJob<{ n: number }>("ping");
const Pong = defineJob<{ n: number }>("pong");

/** A store that is never called: these tests only wire and resolve. */
const unusedStore = new Proxy(
  {},
  {
    get: (_target, name) => () => {
      throw new Error(`store.${String(name)} must not be called while wiring`);
    },
  },
) as JobStore;

@injectable()
class PingWorker extends AbstractQueueWorker<{ n: number }> {
  readonly job = Ping;
  constructor(@inject(JOB_STORE) store: JobStore, @inject(LOGGER) log: Logger) {
    super(store, log, { concurrency: 2 });
  }
  protected parse(payload: unknown): { n: number } {
    return payload as { n: number };
  }
  protected async processItem(): Promise<void> {}
}

@injectable()
class PongWorker extends AbstractQueueWorker<{ n: number }> {
  readonly job = Pong;
  constructor(@inject(JOB_STORE) store: JobStore, @inject(LOGGER) log: Logger) {
    super(store, log);
  }
  protected parse(payload: unknown): { n: number } {
    return payload as { n: number };
  }
  protected async processItem(): Promise<void> {}
}

@injectable()
class SecondPingWorker extends PingWorker {}

function freshContainer() {
  const container = rootContainer.createChildContainer();
  container.registerInstance(JOB_STORE, unusedStore);
  registerLogger(container, { silent: true });
  return container;
}

describe("worker registration", () => {
  it("resolves a worker by its queue name with its dependencies injected", () => {
    const container = freshContainer();
    registerWorkers(container, [PingWorker, PongWorker]);
    const worker = resolveWorker(container, "pong");
    expect(worker).to.be.instanceOf(PongWorker);
    expect(worker.queue).to.equal("pong");
    expect(resolveWorkers(container).map((w) => w.queue)).to.deep.equal(["ping", "pong"]);
  });

  it("names the registered queues when asked for an unknown one", () => {
    const container = freshContainer();
    registerWorkers(container, [PingWorker, PongWorker]);
    expect(() => resolveWorker(container, "pang")).to.throw(ConfigError, 'no worker is registered for "pang" (registered: ping, pong)');
  });

  it("refuses two workers for one queue", () => {
    const container = freshContainer();
    registerWorkers(container, [PingWorker, SecondPingWorker]);
    expect(() => resolveWorkers(container)).to.throw(ConfigError, 'two registered workers claim the queue "ping"');
  });

  it("gives each worker instance its own identity", () => {
    const container = freshContainer();
    registerWorkers(container, [PingWorker]);
    const [first] = resolveWorkers(container);
    const [second] = resolveWorkers(container);
    expect(first?.workerId).to.match(/^[0-9a-f]{8}(\.\d+)?$/);
    expect(first?.workerId).to.not.equal(second?.workerId);
  });

  it("validates worker options at construction", () => {
    class ImpatientWorker extends AbstractQueueWorker<number> {
      readonly job = defineJob<number>("impatient");
      constructor() {
        super(unusedStore, registerLogger(rootContainer.createChildContainer(), { silent: true }), { leaseMs: 10 });
      }
      protected parse(): number {
        return 1;
      }
      protected async processItem(): Promise<void> {}
    }
    expect(() => new ImpatientWorker()).to.throw(ConfigError, "`leaseMs`");
  });
});
