/* eslint-disable @typescript-eslint/no-useless-constructor -- registration reads a constructor's parameter count (`length`): a class declares its own constructor to have one, since an inherited one counts none */
import { expect } from "chai";
import { createRequire } from "node:module";
import { join } from "node:path";
import { container as rootContainer, inject, injectable, type DependencyContainer } from "tsyringe";
import { JobClient } from "../../src/client/job-client";
import { registerLogger, registerWorkers, resolveWorker, resolveWorkers } from "../../src/di/register-core";
import { CLOCK, JOB_STORE, LOGGER, WORKERS } from "../../src/di/tokens";
import type { WorkerClass } from "../../src/di/worker-class";
import { ConfigError } from "../../src/errors/config-errors";
import { defineJob, type JobDefinition } from "../../src/job/job-definition";
import { createSilentLogger } from "../../src/logging/create-logger";
import type { Logger } from "../../src/logging/logger";
import type { JobStore } from "../../src/store/job-store";
import type { Clock } from "../../src/time/clock";
import { InMemoryJobStore } from "../../src/testing/memory/in-memory-job-store";
import { runJob } from "../../src/testing/run-job";
import { AbstractQueueWorker } from "../../src/worker/abstract-queue-worker";

interface Ping {
  readonly n: number;
}
const Ping = defineJob<Ping, number>("ping");

/** A worker without a decorator, as plain JavaScript writes it: its constructor's dependencies are a static list. */
class ListedPingWorker extends AbstractQueueWorker<Ping, number> {
  static readonly inject = [JOB_STORE, LOGGER] as const;
  readonly job = Ping;
  readonly given: { readonly store: JobStore; readonly log: Logger };

  constructor(store: JobStore, log: Logger) {
    super(store, log, { concurrency: 2 });
    this.given = { store, log };
  }

  protected parse(payload: unknown): Ping {
    return payload as Ping;
  }

  protected async processItem(item: Ping): Promise<number> {
    return item.n * 2;
  }
}

/** The same, declared the decorator way: both kinds register side by side. */
@injectable()
class DecoratedPongWorker extends AbstractQueueWorker<Ping> {
  readonly job = defineJob<Ping>("pong");
  constructor(@inject(JOB_STORE) store: JobStore, @inject(LOGGER) log: Logger) {
    super(store, log);
  }
  protected parse(payload: unknown): Ping {
    return payload as Ping;
  }
  protected async processItem(): Promise<void> {}
}

/** A worker that says nothing about its constructor's parameters: what forgetting `@injectable()` in JavaScript looks like. */
class SilentWorker extends AbstractQueueWorker<Ping> {
  readonly job = defineJob<Ping>("silent");
  constructor(store: JobStore, log: Logger) {
    super(store, log);
  }
  protected parse(payload: unknown): Ping {
    return payload as Ping;
  }
  protected async processItem(): Promise<void> {}
}

/** The documented plain JavaScript worker (docs/writing-jobs.md), loaded as Node loads it: no compiler touched it. */
const plainJs = createRequire(__filename)(join(__dirname, "..", "..", "..", "test", "di", "fixtures", "send-welcome-worker.cjs")) as {
  readonly MAILER: symbol;
  readonly SendWelcome: JobDefinition<{ email: string }, { welcomed: string }>;
  readonly SendWelcomeWorker: WorkerClass &
    (new (store: JobStore, log: Logger, mailer: Mailer) => AbstractQueueWorker<{ email: string }, { welcomed: string }>);
};

interface Mailer {
  send(to: string, subject: string, options: { signal: AbortSignal }): Promise<void>;
}

/** A mailer that records what it sent. */
function recordingMailer(): Mailer & { readonly sent: string[] } {
  const sent: string[] = [];
  return { sent, send: async (to, subject) => void sent.push(`${subject} → ${to}`) };
}

function containerWith(store: JobStore = new InMemoryJobStore()): DependencyContainer {
  const container = rootContainer.createChildContainer();
  container.registerInstance(JOB_STORE, store);
  registerLogger(container, { logger: createSilentLogger() });
  return container;
}

describe("workers that list their dependencies in static inject", () => {
  it("runs a job of the plain JavaScript worker from the guide, resolved with an application's own token, through the in-memory store", async () => {
    const store = new InMemoryJobStore();
    const container = containerWith(store);
    const mailer = recordingMailer();
    container.registerInstance(plainJs.MAILER, mailer);
    registerWorkers(container, [plainJs.SendWelcomeWorker]);

    const { id } = await new JobClient(store).enqueue(plainJs.SendWelcome, { email: "ada@example.com" });
    const summary = await resolveWorker(container, "send-welcome").start();

    expect(summary.succeeded).to.equal(1);
    expect(mailer.sent).to.deep.equal(["Welcome! → ada@example.com"]);
    expect((await store.getJob({ id }))?.result).to.deep.equal({ welcomed: "ada@example.com" });
  });

  it("gives runJob a plain JavaScript worker built by hand, as the test kit expects", async () => {
    const mailer = recordingMailer();
    const worker = new plainJs.SendWelcomeWorker(new InMemoryJobStore(), createSilentLogger(), mailer);
    const outcome = await runJob(worker, { email: "grace@example.com" });
    expect(outcome.status === "succeeded" && outcome.result).to.deep.equal({ welcomed: "grace@example.com" });
    const refused = await runJob(worker, { email: "not an address" });
    expect(refused.status, "the kind's schema still checks the payload").to.equal("dead");
  });

  it("passes each listed token's registration to the constructor, in order, and builds a new worker per resolution", async () => {
    const store = new InMemoryJobStore();
    const log = createSilentLogger();
    const container = rootContainer.createChildContainer();
    container.registerInstance(JOB_STORE, store);
    container.registerInstance(LOGGER, log);
    registerWorkers(container, [ListedPingWorker]);

    const worker = resolveWorker(container, "ping") as ListedPingWorker;
    expect(worker).to.be.instanceOf(ListedPingWorker);
    expect(worker.given.store).to.equal(store);
    expect(worker.given.log).to.equal(log);
    expect(worker.options.concurrency).to.equal(2);
    expect(resolveWorker(container, "ping")).to.not.equal(worker);
    const outcome = await runJob(worker, { n: 21 });
    expect(outcome.status === "succeeded" && outcome.result).to.equal(42);
  });

  it("resolves the tokens from the container doing the resolving, so a child container's registrations win", () => {
    const parent = containerWith();
    registerWorkers(parent, [ListedPingWorker]);
    const childStore = new InMemoryJobStore();
    const child = parent.createChildContainer();
    child.registerInstance(JOB_STORE, childStore);

    expect((resolveWorker(child, "ping") as ListedPingWorker).given.store).to.equal(childStore);
    expect((resolveWorker(parent, "ping") as ListedPingWorker).given.store).to.not.equal(childStore);
  });

  it("registers beside decorated workers under one token", () => {
    const container = containerWith();
    registerWorkers(container, [ListedPingWorker, DecoratedPongWorker]);
    const workers = container.resolveAll(WORKERS);
    expect(workers.map((worker) => worker.constructor)).to.deep.equal([ListedPingWorker, DecoratedPongWorker]);
    expect(resolveWorkers(container).map((worker) => worker.queue)).to.deep.equal(["ping", "pong"]);
  });

  it("lets a subclass without decorators use the list it inherits, and a decorated subclass its own decorators", () => {
    class DoublePingWorker extends ListedPingWorker {}
    @injectable()
    class ClockedPingWorker extends ListedPingWorker {
      constructor(
        @inject(JOB_STORE) store: JobStore,
        @inject(LOGGER) log: Logger,
        @inject(CLOCK) readonly clock: Clock,
      ) {
        super(store, log);
      }
    }
    const container = containerWith();
    const clock: Clock = { now: () => 0, sleep: async () => undefined };
    container.registerInstance(CLOCK, clock);
    registerWorkers(container, [DoublePingWorker]);
    expect(resolveWorker(container, "ping")).to.be.instanceOf(DoublePingWorker);

    const other = containerWith();
    other.registerInstance(CLOCK, clock);
    // Its type still carries the parent's two-token list, which the compiler would hold against its three parameters.
    const clocked: WorkerClass = ClockedPingWorker;
    registerWorkers(other, [clocked]);
    expect((resolveWorker(other, "ping") as ClockedPingWorker).clock).to.equal(clock);
  });

  it("still takes tsyringe's decorators applied by hand, without TypeScript's parameter types", () => {
    class HandDecoratedWorker extends SilentWorker {
      constructor(store: JobStore, log: Logger) {
        super(store, log);
      }
    }
    inject(JOB_STORE)(HandDecoratedWorker, undefined, 0);
    inject(LOGGER)(HandDecoratedWorker, undefined, 1);
    injectable()(HandDecoratedWorker);
    const container = containerWith();
    registerWorkers(container, [HandDecoratedWorker]);
    expect(resolveWorker(container, "silent")).to.be.instanceOf(HandDecoratedWorker);
  });

  it("names the class and the token when a listed token is not registered", () => {
    const container = rootContainer.createChildContainer();
    container.registerInstance(JOB_STORE, new InMemoryJobStore());
    registerWorkers(container, [ListedPingWorker]);
    expect(() => resolveWorkers(container))
      .to.throw(ConfigError, "Invalid option `ListedPingWorker.inject[1]`: Symbol(stint.Logger) could not be resolved: ")
      .with.property("message")
      .that.contains("unregistered dependency token");
  });
});

describe("registering a worker class that does not say what to inject", () => {
  it("fails at registration, naming the class and both ways to declare its dependencies", () => {
    const container = containerWith();
    expect(() => registerWorkers(container, [ListedPingWorker, SilentWorker])).to.throw(
      ConfigError,
      "Invalid option `workers`: SilentWorker's constructor takes 2 parameters, but the class does not say what to inject into them: " +
        "decorate the class with @injectable() and each parameter with @inject(TOKEN), " +
        "or declare static inject = [TOKEN, ...] with one token per parameter, in order (for example static inject = [JOB_STORE, LOGGER])",
    );
    expect(container.isRegistered(WORKERS), "a refused list registers none of its classes").to.equal(false);
  });

  it("lets a constructor without parameters through: tsyringe constructs it as it is", () => {
    class SelfContainedWorker extends AbstractQueueWorker<Ping> {
      readonly job = defineJob<Ping>("self-contained");
      constructor() {
        super(new InMemoryJobStore(), createSilentLogger());
      }
      protected parse(payload: unknown): Ping {
        return payload as Ping;
      }
      protected async processItem(): Promise<void> {}
    }
    const container = containerWith();
    registerWorkers(container, [SelfContainedWorker]);
    expect(resolveWorker(container, "self-contained")).to.be.instanceOf(SelfContainedWorker);
  });
});

describe("a worker whose parameters are decorated but not the class", () => {
  /** What forgetting `@injectable()` in TypeScript looks like: tsyringe records the tokens, but not the constructor. */
  class UndecoratedClassWorker extends SilentWorker {
    constructor(@inject(JOB_STORE) store: JobStore, @inject(LOGGER) log: Logger) {
      super(store, log);
    }
  }

  it("is refused when first resolved with a message that names the class, the missing @injectable() and static inject", () => {
    const container = containerWith();
    registerWorkers(container, [UndecoratedClassWorker]);
    expect(() => resolveWorker(container, "silent")).to.throw(
      ConfigError,
      'Invalid option `workers`: tsyringe cannot construct UndecoratedClassWorker (TypeInfo not known for "UndecoratedClassWorker"): ' +
        "a class whose constructor takes parameters needs @injectable() on the class, beside @inject(TOKEN) on each parameter; " +
        "a worker class may declare static inject = [TOKEN, ...] instead, one token per parameter, in order (for example static inject = [JOB_STORE, LOGGER])",
    );
  });

  it("passes on any other error of the container as it was", () => {
    const container = rootContainer.createChildContainer();
    container.registerInstance(JOB_STORE, new InMemoryJobStore());
    registerWorkers(container, [DecoratedPongWorker]);
    expect(() => resolveWorkers(container))
      .to.throw(Error)
      .that.satisfies((error: Error) => !(error instanceof ConfigError) && error.message.includes("Symbol(stint.Logger)"));
  });
});

describe("a static inject that cannot be right", () => {
  /** SilentWorker with `inject` set to `value`, as JavaScript can. */
  function listing(value: unknown): WorkerClass {
    class MisdeclaredWorker extends SilentWorker {
      constructor(store: JobStore, log: Logger) {
        super(store, log);
      }
    }
    Object.defineProperty(MisdeclaredWorker, "inject", { value });
    return MisdeclaredWorker;
  }

  it("is refused when it is not an array", () => {
    expect(() => registerWorkers(containerWith(), [listing(JOB_STORE)])).to.throw(
      ConfigError,
      "Invalid option `MisdeclaredWorker.inject`: must be an array of injection tokens, one per constructor parameter (static inject = [JOB_STORE, LOGGER]), got a symbol (Symbol(stint.JobStore))",
    );
    expect(() => registerWorkers(containerWith(), [listing(undefined)])).to.throw(
      ConfigError,
      "`MisdeclaredWorker.inject`: must be an array of injection tokens",
    );
  });

  it("is refused when an entry is not a token, naming its position", () => {
    expect(() => registerWorkers(containerWith(), [listing([JOB_STORE, undefined])])).to.throw(
      ConfigError,
      "Invalid option `MisdeclaredWorker.inject[1]`: must be an injection token (a symbol such as JOB_STORE, a class or a string), got undefined (an import of a name its module does not export?)",
    );
    expect(() => registerWorkers(containerWith(), [listing([JOB_STORE, 7])])).to.throw(
      ConfigError,
      "`MisdeclaredWorker.inject[1]`: must be an injection token (a symbol such as JOB_STORE, a class or a string), got a number (7)",
    );
  });

  it("is refused when it lists fewer tokens than the constructor takes", () => {
    expect(() => registerWorkers(containerWith(), [listing([JOB_STORE])])).to.throw(
      ConfigError,
      "Invalid option `MisdeclaredWorker.inject`: lists 1 token, but the constructor takes 2 parameters: give one token per parameter, in order",
    );
  });

  it("is checked against the constructor's parameters by the compiler", () => {
    class SwappedWorker extends SilentWorker {
      static readonly inject = [LOGGER, JOB_STORE] as const;
      constructor(store: JobStore, log: Logger) {
        super(store, log);
      }
    }
    class ShortWorker extends SilentWorker {
      static readonly inject = [JOB_STORE] as const;
      constructor(store: JobStore, log: Logger) {
        super(store, log);
      }
    }
    class LongWorker extends SilentWorker {
      static readonly inject = [JOB_STORE, LOGGER, CLOCK] as const;
      constructor(store: JobStore, log: Logger) {
        super(store, log);
      }
    }
    class UncheckableWorker extends SilentWorker {
      static readonly inject = [JOB_STORE, LOGGER];
      constructor(store: JobStore, log: Logger) {
        super(store, log);
      }
    }
    class BareSymbolWorker extends SilentWorker {
      static readonly inject = [Symbol.for("stint.JobStore"), "logger"] as const;
      constructor(store: JobStore, log: Logger) {
        super(store, log);
      }
    }
    const register = (container: DependencyContainer): void => {
      // @ts-expect-error -- a Logger token where the constructor takes a JobStore
      registerWorkers(container, [SwappedWorker]);
      // @ts-expect-error -- one token for two parameters
      registerWorkers(container, [ShortWorker]);
      // @ts-expect-error -- three tokens for two parameters
      registerWorkers(container, [LongWorker]);
      // A list of unknown length (no `as const`) cannot be checked, and a bare symbol or a string carries no type.
      registerWorkers(container, [UncheckableWorker, BareSymbolWorker, ListedPingWorker, DecoratedPongWorker]);
    };
    // At run time only the count is known: the short list is refused, the swapped one is not.
    expect(() => register(containerWith())).to.throw(ConfigError, "`ShortWorker.inject`: lists 1 token");
  });
});
