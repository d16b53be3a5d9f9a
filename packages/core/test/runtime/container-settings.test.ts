import { expect } from "chai";
import { container as rootContainer, inject, injectable, type DependencyContainer } from "tsyringe";
import { registerLogger, registerWorkers } from "../../src/di/register-core";
import { JOB_STORE, LOGGER } from "../../src/di/tokens";
import { ConfigError } from "../../src/errors/config-errors";
import { defineJob } from "../../src/job/job-definition";
import type { LogLevel } from "../../src/logging/log-settings";
import type { Logger } from "../../src/logging/logger";
import { createLogger } from "../../src/logging/create-logger";
import { resolveContainerSettings } from "../../src/runtime/container-settings";
import { describeSource } from "../../src/settings/resolve-run-settings";
import type { JobStore } from "../../src/store/job-store";
import { AbstractQueueWorker } from "../../src/worker/abstract-queue-worker";

const Mail = defineJob<unknown>("mail");

@injectable()
class MailWorker extends AbstractQueueWorker<unknown> {
  readonly job = Mail;
  constructor(@inject(JOB_STORE) store: JobStore, @inject(LOGGER) log: Logger) {
    super(store, log, { concurrency: 8, leaseMs: 120_000, shutdownTimeoutMs: 45_000 });
  }
  protected parse(payload: unknown): unknown {
    return payload;
  }
  protected async processItem(): Promise<void> {}
}

function appContainer(level: LogLevel): DependencyContainer {
  const container = rootContainer.createChildContainer();
  container.registerInstance(JOB_STORE, {} as JobStore);
  registerLogger(container, { logger: createLogger({ silent: true, level, format: "json" }) });
  registerWorkers(container, [MailWorker]);
  return container;
}

describe("resolveContainerSettings", () => {
  it("takes the code's values from the worker's constructor and the run's options, and the log level from the logger", () => {
    const settings = resolveContainerSettings(appContainer("warn"), { queues: ["mail"], env: {}, pollIntervalMs: 500 });
    const shown = Object.entries(settings.queues[0]!.settings).map(([key, { value, source }]) => `${key} ${value} ${describeSource(source)}`);
    expect(shown).to.deep.equal([
      "concurrency 8 code",
      "prefetch auto default",
      "leaseMs 120000 code",
      "pollIntervalMs 500 code",
      "shutdownTimeoutMs 45000 code",
    ]);
    expect(settings.logLevel).to.deep.equal({ value: "warn", source: { kind: "code" } });
  });

  it("lets the run's shutdownTimeoutMs beat the worker's, and the environment beat both", () => {
    const container = appContainer("info");
    const fromRun = resolveContainerSettings(container, { queues: ["mail"], env: {}, shutdownTimeoutMs: 10_000 });
    expect(fromRun.queues[0]!.settings.shutdownTimeoutMs).to.deep.equal({ value: 10_000, source: { kind: "code" } });
    const fromEnv = resolveContainerSettings(container, { queues: ["mail"], env: { STINT_SHUTDOWN_TIMEOUT_MAIL: "1m" }, shutdownTimeoutMs: 10_000 });
    expect(fromEnv.queues[0]!.settings.shutdownTimeoutMs).to.deep.equal({ value: 60_000, source: { kind: "env", name: "STINT_SHUTDOWN_TIMEOUT_MAIL" } });
  });

  it("reports the level the logger really writes at, with a warning, when it does not follow the level asked for", () => {
    const settings = resolveContainerSettings(appContainer("info"), { queues: ["mail"], env: {}, flags: { logLevel: "debug" } });
    expect(settings.logLevel).to.deep.equal({ value: "info", source: { kind: "code" } });
    expect(settings.warnings).to.deep.equal([
      "the logger writes at info, not at debug as flag --log-level asks: build it with registerLogger or createLogger, passing the app environment's logLevel",
    ]);
    const followed = resolveContainerSettings(appContainer("debug"), { queues: ["mail"], env: { STINT_LOG_LEVEL: "debug" } });
    expect(followed.logLevel).to.deep.equal({ value: "debug", source: { kind: "env", name: "STINT_LOG_LEVEL" } });
    expect(followed.warnings).to.deep.equal([]);
  });

  it("takes the run's scheduleGraceMs under STINT_SCHEDULE_GRACE, and refuses one outside a minute to a year, naming it", () => {
    const container = appContainer("info");
    const fromRun = resolveContainerSettings(container, { queues: ["mail"], env: {}, scheduleGraceMs: 7_200_000 });
    expect(fromRun.scheduleGraceMs).to.deep.equal({ value: 7_200_000, source: { kind: "code" } });
    const fromEnv = resolveContainerSettings(container, { queues: ["mail"], env: { STINT_SCHEDULE_GRACE: "3d" }, scheduleGraceMs: 7_200_000 });
    expect(fromEnv.scheduleGraceMs).to.deep.equal({ value: 259_200_000, source: { kind: "env", name: "STINT_SCHEDULE_GRACE" } });
    expect(() => resolveContainerSettings(container, { queues: ["mail"], env: {}, scheduleGraceMs: 1_000 })).to.throw(ConfigError, "`scheduleGraceMs`");
  });

  it("refuses a queue without a registered worker", () => {
    expect(() => resolveContainerSettings(appContainer("info"), { queues: ["nope"], env: {} })).to.throw(/nope/);
  });
});
