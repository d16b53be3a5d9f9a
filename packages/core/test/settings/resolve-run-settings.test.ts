import { expect } from "chai";
import fc from "fast-check";
import { ErrorCode } from "../../src/errors/error-codes";
import { hasErrorCode } from "../../src/errors/stint-error";
import { describeSource, resolveRunSettings, settingOverrides, type SettingFlags } from "../../src/settings/resolve-run-settings";
import { TUNABLE_SETTINGS, type TunableSetting } from "../../src/settings/setting-specs";
import { queueVariableSuffix } from "../../src/settings/settings-variables";

const QUEUE = "send-invoice-email";

/** The message of what `run` throws (and that it is a configuration error naming `name`). */
function failure(run: () => unknown, name: string): string {
  try {
    run();
  } catch (thrown) {
    expect(hasErrorCode(thrown, ErrorCode.Config), String(thrown)).to.equal(true);
    expect(thrown).to.have.property("variable", name);
    return (thrown as Error).message;
  }
  throw new Error("expected a throw");
}

describe("resolveRunSettings", () => {
  it("takes the built-in default when nothing sets a value", () => {
    const [queue] = resolveRunSettings({ queues: [{ queue: QUEUE }] }).queues;
    expect(queue!.settings).to.deep.equal({
      concurrency: { value: 5, source: { kind: "default" } },
      prefetch: { value: "auto", source: { kind: "default" } },
      leaseMs: { value: 60_000, source: { kind: "default" } },
      pollIntervalMs: { value: 2_000, source: { kind: "default" } },
      shutdownTimeoutMs: { value: 30_000, source: { kind: "default" } },
    });
  });

  it("lets the code's value beat the default, the global variable beat the code, the queue's variable beat the global one, and a flag beat them all", () => {
    const layers = (upTo: number): { code?: { concurrency: number }; env: Record<string, string>; flags: SettingFlags } => ({
      ...(upTo >= 1 ? { code: { concurrency: 8 } } : {}),
      env: { ...(upTo >= 2 ? { STINT_CONCURRENCY: "4" } : {}), ...(upTo >= 3 ? { STINT_CONCURRENCY_SEND_INVOICE_EMAIL: "3" } : {}) },
      flags: upTo >= 4 ? { concurrency: "2" } : {},
    });
    const seen = [0, 1, 2, 3, 4].map((upTo) => {
      const { code, env, flags } = layers(upTo);
      const setting = resolveRunSettings({ queues: [{ queue: QUEUE, ...(code === undefined ? {} : { code }) }], env, flags }).queues[0]!.settings.concurrency;
      return `${setting.value} from ${describeSource(setting.source)}`;
    });
    expect(seen).to.deep.equal([
      "5 from default",
      "8 from code",
      "4 from env STINT_CONCURRENCY",
      "3 from env STINT_CONCURRENCY_SEND_INVOICE_EMAIL",
      "2 from flag --concurrency",
    ]);
  });

  it("takes the highest layer that is set, for any setting and any combination of layers", () => {
    const valueOf: { readonly [K in TunableSetting]: fc.Arbitrary<{ text: string; value: unknown }> } = {
      concurrency: fc.integer({ min: 1, max: 1_000 }).map((n) => ({ text: String(n), value: n })),
      prefetch: fc.oneof(
        fc.constant({ text: "auto", value: "auto" }),
        fc.integer({ min: 0, max: 10_000 }).map((n) => ({ text: String(n), value: n })),
      ),
      leaseMs: fc.integer({ min: 1, max: 86_400 }).map((s) => ({ text: `${s}s`, value: s * 1_000 })),
      pollIntervalMs: fc.integer({ min: 10, max: 3_600_000 }).map((ms) => ({ text: `${ms}ms`, value: ms })),
      shutdownTimeoutMs: fc.integer({ min: 0, max: 1_440 }).map((m) => ({ text: `${m}m`, value: m * 60_000 })),
    };
    const settings = Object.keys(TUNABLE_SETTINGS) as TunableSetting[];
    const layer = (key: TunableSetting) => fc.option(valueOf[key], { nil: undefined });
    const arbitrary = fc.constantFrom(...settings).chain((key) =>
      fc.record({
        key: fc.constant(key),
        flag: layer(key),
        queueEnv: layer(key),
        globalEnv: layer(key),
        code: layer(key),
        queue: fc.stringMatching(/^[a-z0-9][a-z0-9_.:-]{0,20}$/),
      }),
    );
    fc.assert(
      fc.property(arbitrary, ({ key, flag, queueEnv, globalEnv, code, queue }) => {
        const variable = TUNABLE_SETTINGS[key].variable;
        const queueVariable = `${variable}_${queueVariableSuffix(queue)}`;
        const env = {
          ...(globalEnv === undefined ? {} : { [variable]: globalEnv.text }),
          ...(queueEnv === undefined ? {} : { [queueVariable]: queueEnv.text }),
        };
        const resolved = resolveRunSettings({
          queues: [{ queue, ...(code === undefined ? {} : { code: { [key]: code.value } }) }],
          env,
          flags: flag === undefined ? {} : { [key]: flag.text },
        }).queues[0]!.settings[key];
        const expected =
          flag !== undefined
            ? { value: flag.value, source: { kind: "flag", name: TUNABLE_SETTINGS[key].flag } }
            : queueEnv !== undefined
              ? { value: queueEnv.value, source: { kind: "env", name: queueVariable } }
              : globalEnv !== undefined
                ? { value: globalEnv.value, source: { kind: "env", name: variable } }
                : code !== undefined
                  ? { value: code.value, source: { kind: "code" } }
                  : { value: TUNABLE_SETTINGS[key].fallback, source: { kind: "default" } };
        expect(resolved).to.deep.equal(expected);
      }),
    );
  });

  it("reads each setting's variable and flag: prefetch as a number or auto, durations as 500ms, 90s, 2m or 1h30m", () => {
    const env = {
      STINT_PREFETCH: "auto",
      STINT_PREFETCH_SEND_INVOICE_EMAIL: "0",
      STINT_LEASE: "90s",
      STINT_POLL_INTERVAL: "500ms",
      STINT_SHUTDOWN_TIMEOUT: "1h30m",
    };
    const [queue] = resolveRunSettings({ queues: [{ queue: QUEUE }], env, flags: { leaseMs: "2m" } }).queues;
    expect(settingOverrides(queue!)).to.deep.equal({ prefetch: 0, leaseMs: 120_000, pollIntervalMs: 500, shutdownTimeoutMs: 5_400_000 });
  });

  it("applies a queue's variables to that queue only, and ignores variables of queues not in the run", () => {
    const env = { STINT_CONCURRENCY_AI_SUMMARY: "2", STINT_CONCURRENCY_NOT_RUN_HERE: "abc" };
    const queues = resolveRunSettings({ queues: [{ queue: "ai-summary" }, { queue: QUEUE, code: { concurrency: 8 } }], env }).queues;
    expect(queues.map((queue) => queue.settings.concurrency.value)).to.deep.equal([2, 8]);
  });

  it("counts an empty or blank variable as unset", () => {
    const [queue] = resolveRunSettings({ queues: [{ queue: QUEUE }], env: { STINT_CONCURRENCY: "", STINT_LEASE: "  " } }).queues;
    expect(settingOverrides(queue!)).to.deep.equal({});
  });

  it("overrides only what a flag or a variable set", () => {
    const [queue] = resolveRunSettings({ queues: [{ queue: QUEUE, code: { concurrency: 8, leaseMs: 120_000 } }], env: { STINT_LEASE: "30s" } }).queues;
    expect(settingOverrides(queue!)).to.deep.equal({ leaseMs: 30_000 });
  });

  it("names the variable, what it accepts and what it got when a value is invalid, with the code options' ranges", () => {
    const resolve =
      (env: Record<string, string>, flags: SettingFlags = {}) =>
      () =>
        resolveRunSettings({ queues: [{ queue: QUEUE }], env, flags });
    expect(failure(resolve({ STINT_CONCURRENCY_SEND_INVOICE_EMAIL: "abc" }), "STINT_CONCURRENCY_SEND_INVOICE_EMAIL")).to.equal(
      'STINT_CONCURRENCY_SEND_INVOICE_EMAIL must be an integer from 1 to 1000; got "abc"',
    );
    expect(failure(resolve({ STINT_CONCURRENCY: "1001" }), "STINT_CONCURRENCY")).to.equal('STINT_CONCURRENCY must be an integer from 1 to 1000; got "1001"');
    expect(failure(resolve({ STINT_CONCURRENCY: "2.5" }), "STINT_CONCURRENCY")).to.contain("must be an integer");
    expect(failure(resolve({ STINT_PREFETCH: "lots" }), "STINT_PREFETCH")).to.equal('STINT_PREFETCH must be auto or an integer from 0 to 10000; got "lots"');
    expect(failure(resolve({ STINT_LEASE: "90000" }), "STINT_LEASE")).to.equal(
      'STINT_LEASE must be a duration from 200ms to 1d, such as 500ms, 90s or 2m; got "90000"',
    );
    expect(failure(resolve({ STINT_LEASE: "100ms" }), "STINT_LEASE")).to.contain("from 200ms to 1d");
    expect(failure(resolve({ STINT_POLL_INTERVAL: "2h" }), "STINT_POLL_INTERVAL")).to.contain("from 10ms to 1h");
    expect(failure(resolve({ STINT_LOG_LEVEL: "verbose" }), "STINT_LOG_LEVEL")).to.equal(
      'STINT_LOG_LEVEL must be one of error, warn, info, debug; got "verbose"',
    );
  });

  it("names the flag when a flag's value is invalid", () => {
    const resolve = (flags: SettingFlags) => () => resolveRunSettings({ queues: [{ queue: QUEUE }], flags });
    expect(failure(resolve({ concurrency: "0" }), "--concurrency")).to.equal('--concurrency must be an integer from 1 to 1000; got "0"');
    expect(failure(resolve({ shutdownTimeoutMs: "soon" }), "--shutdown-timeout")).to.contain("--shutdown-timeout must be a duration");
    expect(failure(resolve({ logLevel: "loud" }), "--log-level")).to.equal('--log-level must be one of error, warn, info, debug; got "loud"');
  });

  it("refuses a queue variable that two queues of the run would share, and allows them without one", () => {
    const queues = [{ queue: "send.invoice" }, { queue: "send-invoice" }];
    expect(resolveRunSettings({ queues, env: { STINT_CONCURRENCY: "3" } }).queues).to.have.length(2);
    expect(failure(() => resolveRunSettings({ queues, env: { STINT_LEASE_SEND_INVOICE: "2m" } }), "STINT_LEASE_SEND_INVOICE")).to.equal(
      'STINT_LEASE_SEND_INVOICE would set both queues "send.invoice" and "send-invoice", whose names make the same suffix: set STINT_LEASE or --lease instead, or run them in separate processes; got "2m"',
    );
  });

  it("resolves the log level once per process: flag, STINT_LOG_LEVEL, the logger's own, then info", () => {
    const level = (input: { env?: Record<string, string>; flags?: SettingFlags; codeLogLevel?: "warn" }) => {
      const { value, source } = resolveRunSettings({ queues: [{ queue: QUEUE }], ...input }).logLevel;
      return `${value} from ${describeSource(source)}`;
    };
    expect(level({})).to.equal("info from default");
    expect(level({ codeLogLevel: "warn" })).to.equal("warn from code");
    expect(level({ codeLogLevel: "warn", env: { STINT_LOG_LEVEL: "debug" } })).to.equal("debug from env STINT_LOG_LEVEL");
    expect(level({ env: { STINT_LOG_LEVEL: "debug" }, flags: { logLevel: "error" } })).to.equal("error from flag --log-level");
  });

  it("resolves the schedule grace once per process: flag, STINT_SCHEDULE_GRACE, the code's, then a day", () => {
    const grace = (input: { env?: Record<string, string>; flags?: SettingFlags; codeScheduleGraceMs?: number }) => {
      const { value, source } = resolveRunSettings({ queues: [{ queue: QUEUE }], ...input }).scheduleGraceMs;
      return `${value} from ${describeSource(source)}`;
    };
    expect(grace({})).to.equal("86400000 from default");
    expect(grace({ codeScheduleGraceMs: 3_600_000 })).to.equal("3600000 from code");
    expect(grace({ codeScheduleGraceMs: 3_600_000, env: { STINT_SCHEDULE_GRACE: "7d" } })).to.equal("604800000 from env STINT_SCHEDULE_GRACE");
    expect(grace({ env: { STINT_SCHEDULE_GRACE: "7d" }, flags: { scheduleGraceMs: "12h" } })).to.equal("43200000 from flag --schedule-grace");
  });

  it("names STINT_SCHEDULE_GRACE, what it accepts and what it got when the grace is invalid", () => {
    for (const text of ["30s", "24", "400d", "one day"]) {
      expect(failure(() => resolveRunSettings({ queues: [{ queue: QUEUE }], env: { STINT_SCHEDULE_GRACE: text } }), "STINT_SCHEDULE_GRACE")).to.equal(
        `STINT_SCHEDULE_GRACE must be a duration from 1m to 365d, such as 12h, 1d or 7d; got ${JSON.stringify(text)}`,
      );
    }
  });

  it("warns of variables that look like a misspelt setting", () => {
    const { warnings } = resolveRunSettings({ queues: [{ queue: QUEUE }], env: { STINT_CONCURENCY: "4" } });
    expect(warnings).to.deep.equal(["STINT_CONCURENCY is not a stint setting and is ignored; did you mean STINT_CONCURRENCY?"]);
  });
});

describe("queueVariableSuffix", () => {
  it("upper-cases the queue name and turns every other character into _", () => {
    expect(queueVariableSuffix("send-invoice-email")).to.equal("SEND_INVOICE_EMAIL");
    expect(queueVariableSuffix("billing:v2.retry_x")).to.equal("BILLING_V2_RETRY_X");
  });

  it("makes a suffix of only letters, digits and _ for any queue name", () => {
    fc.assert(fc.property(fc.stringMatching(/^[a-z0-9][a-z0-9_.:-]{0,127}$/), (queue) => /^[A-Z0-9_]+$/.test(queueVariableSuffix(queue))));
  });
});
