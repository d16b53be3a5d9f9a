import { expect } from "chai";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { IScaledObject } from "@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject";
import type { ITriggerAuthentication } from "@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication";
import { parseCron } from "@stint/core/internal";
import { firstRunAt } from "@stint/core/driver";
import { EXAMPLE_SCHEDULES } from "../../src/schedules";
import { exampleQueues, type ExampleQueue } from "./example-queues";
import { schemaValidatorFor } from "./kubernetes-schemas";
import { describeManifest, K8S_DIR, loadManifests, type Manifest } from "./load-manifests";
import { containsRun, normalised, resourceTables } from "./readme-markdown";
import { durationSeconds, optionValue, type StintArgs } from "./stint-args";
import { cronSpecOf, jobSpecOf, probePort, stintPods, type StintPod } from "./stint-pods";
import { literalEnv, podSettings, settingText } from "./pod-settings";

/** The Secret (and key) every pod and KEDA read the database URL from. */
const DATABASE_SECRET = { name: "stint-database", key: "url" };

/** What `--app` names in every `stint run`: the example application's entry point. */
const EXAMPLE_APP = "@stint/examples/app";

/** The only KEDA query shape allowed: a due-job count on the claim index (see keda-query.test.ts). */
const DUE_JOBS_QUERY = /^SELECT count\(\*\) FROM stint\.jobs WHERE queue = '([^']+)' AND state IN \('queued', 'failed'\) AND run_at <= now\(\)$/;

function seconds(args: StintArgs, option: string, where: string): number {
  const value = optionValue(args, option);
  expect(value, `${where} passes ${option}`).to.be.a("string");
  return durationSeconds(value!);
}

/** The longest shutdown timeout among a worker pod's queues, in seconds, wherever it is set (flag, variable, worker). */
function shutdownSeconds(pod: StintPod, queues: readonly ExampleQueue[]): number {
  return Math.max(...podSettings(pod, queues).queues.map(({ settings }) => settings.shutdownTimeoutMs.value / 1000));
}

function formatTimeout(timeoutMs: number | null): string {
  return timeoutMs === null ? "none" : `${timeoutMs / 1000} s`;
}

describe("the Kubernetes manifests of the examples", () => {
  let manifests: readonly Manifest[];
  let queues: readonly ExampleQueue[];
  let pods: readonly StintPod[];

  before(async () => {
    manifests = loadManifests();
    queues = await exampleQueues();
    pods = stintPods(manifests);
  });

  const ofKind = (kind: string) => pods.filter((pod) => pod.manifest.kind === kind);
  /** The CronJobs that run workers (`stint run`), not maintenance commands. */
  const workerCronJobs = () => ofKind("CronJob").filter((pod) => pod.args.command === "run");
  const timeoutOf = (queue: string) => queues.find((candidate) => candidate.queue === queue)!.timeoutMs;

  it("parse into resources, one of each kind the deployment needs at least", () => {
    const kinds = new Set(manifests.map((manifest) => manifest.kind));
    expect([...kinds]).to.include.members(["CronJob", "Job", "Deployment", "ScaledObject", "TriggerAuthentication"]);
  });

  it("each validate against the Kubernetes or KEDA schema of their kind", () => {
    const problems: string[] = [];
    for (const manifest of manifests) {
      const validate = schemaValidatorFor(manifest.apiVersion, manifest.kind);
      if (validate === undefined) {
        problems.push(`${describeManifest(manifest)}: no schema known for ${manifest.apiVersion} ${manifest.kind}`);
        continue;
      }
      try {
        validate(manifest.doc);
      } catch (thrown) {
        problems.push(`${describeManifest(manifest)}: ${thrown instanceof Error ? thrown.message : String(thrown)}`);
      }
    }
    expect(problems).to.deep.equal([]);
  });

  it("name every resource once per kind", () => {
    const names = manifests.map((manifest) => `${manifest.kind}/${manifest.name}`);
    expect(names).to.have.length(new Set(names).size);
  });

  it("run every example queue in exactly one once-mode CronJob", () => {
    const cronQueues = workerCronJobs().map(({ manifest, args }) => {
      expect(args.command, describeManifest(manifest)).to.equal("run");
      expect(args.options.get("--once"), `${describeManifest(manifest)} runs --once`).to.equal(true);
      expect(args.positionals, `${describeManifest(manifest)} runs one queue`).to.have.length(1);
      return args.positionals[0]!;
    });
    expect([...cronQueues].sort()).to.deep.equal(queues.map(({ queue }) => queue).sort());
  });

  it("load the example application in every `stint run`", () => {
    for (const { manifest, args } of pods.filter((pod) => pod.args.command === "run")) {
      expect(optionValue(args, "--app"), describeManifest(manifest)).to.equal(EXAMPLE_APP);
    }
  });

  it("end each CronJob's run by its --max-runtime budget, with time for the last claimed jobs, before activeDeadlineSeconds", () => {
    for (const pod of workerCronJobs()) {
      const { manifest, args } = pod;
      const where = describeManifest(manifest);
      const maxRuntime = seconds(args, "--max-runtime", where);
      const shutdownTimeout = shutdownSeconds(pod, queues);
      const lastJobs = Math.max(shutdownTimeout, (timeoutOf(args.positionals[0]!) ?? 0) / 1000);
      const deadline = jobSpecOf(manifest).activeDeadlineSeconds;
      expect(deadline, `${where} sets activeDeadlineSeconds`).to.be.a("number");
      expect(maxRuntime, `${where}: --max-runtime < activeDeadlineSeconds`).to.be.lessThan(deadline!);
      expect(maxRuntime + lastJobs, `${where}: --max-runtime + the last jobs' time < activeDeadlineSeconds`).to.be.lessThan(deadline!);
    }
  });

  it("give every worker pod more termination grace than its shutdown timeout", () => {
    const workers = pods.filter((pod) => pod.args.command === "run");
    expect(workers.map(({ manifest }) => manifest.kind)).to.include.members(["CronJob", "Deployment"]);
    for (const worker of workers) {
      const { manifest, pod } = worker;
      const where = describeManifest(manifest);
      const shutdownTimeout = shutdownSeconds(worker, queues);
      expect(pod.terminationGracePeriodSeconds, `${where} sets terminationGracePeriodSeconds`).to.be.a("number");
      expect(shutdownTimeout, `${where}: shutdown timeout < terminationGracePeriodSeconds`).to.be.lessThan(pod.terminationGracePeriodSeconds!);
    }
  });

  it("set worker settings through STINT_* variables that resolve, each for a queue the pod runs, with no warning", () => {
    const workers = pods.filter((pod) => pod.args.command === "run");
    const used = new Set<string>();
    for (const worker of workers) {
      const where = describeManifest(worker.manifest);
      const settings = podSettings(worker, queues);
      expect(settings.warnings, where).to.deep.equal([]);
      const sources = new Set(
        settings.queues.flatMap((queue) => Object.values(queue.settings).map(({ source }) => (source.kind === "env" ? source.name : ""))),
      );
      for (const name of Object.keys(literalEnv(worker)).filter((variable) => /^STINT_(?!SCHEMA$|LOG_LEVEL$|LOG_FORMAT$|APP$)/.test(variable))) {
        expect(sources.has(name), `${where}: ${name} sets a value of a queue the pod runs`).to.equal(true);
        used.add(name);
      }
    }
    expect([...used], "the Deployment sets its concurrency in the environment").to.include("STINT_CONCURRENCY");
  });

  it("never restart a Job's pod in place, and fail the Job at once on a usage or configuration error (exit 2 or 78)", () => {
    for (const { manifest, pod, container } of [...ofKind("CronJob"), ...ofKind("Job")]) {
      const where = describeManifest(manifest);
      const spec = jobSpecOf(manifest);
      expect(pod.restartPolicy, where).to.equal("Never");
      expect(spec.backoffLimit, `${where} sets backoffLimit`).to.be.a("number");
      for (const code of [2, 78]) {
        const rule = spec.podFailurePolicy?.rules.find((candidate) => candidate.onExitCodes?.values.includes(code));
        expect(rule?.action, `${where}: exit ${code} fails the Job`).to.equal("FailJob");
        expect(rule?.onExitCodes?.containerName, where).to.equal(container.name);
      }
    }
  });

  it("do not count a once run stopped by SIGTERM (exit 130) against backoffLimit", () => {
    for (const { manifest } of workerCronJobs()) {
      const rule = jobSpecOf(manifest).podFailurePolicy?.rules.find((candidate) => candidate.onExitCodes?.values.includes(130));
      expect(rule?.action, describeManifest(manifest)).to.equal("Ignore");
    }
  });

  it("say how each CronJob overlaps, starts late and keeps history", () => {
    for (const { manifest } of ofKind("CronJob")) {
      const where = describeManifest(manifest);
      const spec = cronSpecOf(manifest);
      expect(spec.schedule.split(/\s+/), `${where} has a five-field schedule`).to.have.length(5);
      expect(spec.timeZone, where).to.be.a("string");
      expect(spec.concurrencyPolicy, where).to.be.oneOf(["Allow", "Forbid"]);
      expect(spec.startingDeadlineSeconds, where).to.be.a("number").greaterThan(0);
      expect(spec.successfulJobsHistoryLimit, where).to.be.a("number");
      expect(spec.failedJobsHistoryLimit, where).to.be.a("number");
    }
  });

  it("run each schedule's queue within an hour after every fire of a year, daylight saving time included", () => {
    const from = new Date("2026-01-01T00:00:00Z");
    const until = new Date("2027-01-01T00:00:00Z");
    for (const { spec } of EXAMPLE_SCHEDULES) {
      const cronJob = workerCronJobs().find(({ args }) => args.positionals.includes(spec.queue));
      expect(cronJob, `a CronJob runs ${spec.queue}, the queue of schedule ${spec.name}`).to.not.equal(undefined);
      const cron = cronSpecOf(cronJob!.manifest);
      const runs = parseCron(cron.schedule, cron.timeZone ?? "Etc/UTC");
      for (let fire = firstRunAt(spec, from); fire < until; fire = firstRunAt(spec, fire)) {
        const run = runs.nextRun(fire);
        const lateMs = run === null ? Infinity : run.getTime() - fire.getTime();
        expect(lateMs, `${cronJob!.manifest.name} runs within an hour after ${spec.name} fires at ${fire.toISOString()}`).to.be.at.most(3_600_000);
      }
    }
  });

  it("run every container as non-root on a read-only file system, with DATABASE_URL from the stint-database Secret", () => {
    for (const { manifest, pod, container } of pods) {
      const where = describeManifest(manifest);
      expect(pod.securityContext?.runAsNonRoot, where).to.equal(true);
      expect(pod.securityContext?.runAsUser, where).to.be.a("number").greaterThan(0);
      expect(container.securityContext?.allowPrivilegeEscalation, where).to.equal(false);
      expect(container.securityContext?.readOnlyRootFilesystem, where).to.equal(true);
      expect(container.securityContext?.capabilities?.drop, where).to.deep.equal(["ALL"]);
      const databaseUrl = container.env?.find((variable) => variable.name === "DATABASE_URL");
      expect(databaseUrl?.valueFrom?.secretKeyRef, where).to.deep.equal(DATABASE_SECRET);
      expect(container.resources?.requests, `${where} requests cpu and memory`).to.have.keys("cpu", "memory");
      expect(container.resources?.limits?.["memory"], `${where} limits memory`).to.be.a("string");
    }
  });

  it("prune finished jobs in a CronJob, since the loop Deployment may be scaled to zero", () => {
    const prunes = ofKind("CronJob").filter(({ args }) => args.command === "prune");
    expect(prunes).to.have.length(1);
    expect(ofKind("CronJob").filter(({ args }) => !["run", "prune"].includes(args.command))).to.deep.equal([]);
  });

  it("run `stint migrate` in a Job", () => {
    const migrations = ofKind("Job").filter(({ args }) => args.command === "migrate");
    expect(migrations).to.have.length(1);
    expect(migrations[0]!.args.positionals).to.deep.equal([]);
    expect(migrations[0]!.args.options.get("--app"), "the Job migrates the app's own tables too").to.equal("@stint/examples/app");
  });

  it("run every Deployment in loop mode on example queues, probing /healthz and /readyz at its --health-port", () => {
    const known = queues.map(({ queue }) => queue);
    const deployments = ofKind("Deployment");
    expect(deployments).to.have.length.greaterThan(0);
    for (const { manifest, container, args } of deployments) {
      const where = describeManifest(manifest);
      expect(args.command, where).to.equal("run");
      expect(args.options.has("--once"), `${where} runs in loop mode`).to.equal(false);
      expect(args.positionals, where).to.have.length.greaterThan(0);
      expect(known, where).to.include.members([...args.positionals]);
      const healthPort = Number(optionValue(args, "--health-port"));
      expect(healthPort, `${where} passes --health-port`).to.be.greaterThan(0);
      expect(container.livenessProbe?.httpGet?.path, where).to.equal("/healthz");
      expect(probePort(container.livenessProbe!, container), `${where} liveness port`).to.equal(healthPort);
      expect(container.readinessProbe?.httpGet?.path, where).to.equal("/readyz");
      expect(probePort(container.readinessProbe!, container), `${where} readiness port`).to.equal(healthPort);
      if (container.startupProbe !== undefined) {
        expect(probePort(container.startupProbe, container), `${where} startup port`).to.equal(healthPort);
      }
      const annotations =
        (manifest.doc as { spec?: { template?: { metadata?: { annotations?: Record<string, string> } } } }).spec?.template?.metadata?.annotations ?? {};
      expect(annotations, `${where} asks Prometheus to scrape /metrics on the health port`).to.deep.include({
        "prometheus.io/scrape": "true",
        "prometheus.io/port": String(healthPort),
        "prometheus.io/path": "/metrics",
      });
    }
  });

  it("scale only Deployments of these manifests, on due-job counts of queues they run, authenticated by the database Secret", () => {
    const scaledObjects = manifests.filter((manifest) => manifest.kind === "ScaledObject");
    expect(scaledObjects).to.have.length.greaterThan(0);
    for (const manifest of scaledObjects) {
      const where = describeManifest(manifest);
      const spec = (manifest.doc as unknown as IScaledObject).spec;
      expect(spec.scaleTargetRef.kind ?? "Deployment", where).to.equal("Deployment");
      const target = ofKind("Deployment").find((pod) => pod.manifest.name === spec.scaleTargetRef.name);
      expect(target, `${where} scales a Deployment of the manifests`).to.not.equal(undefined);
      expect(spec.triggers, where).to.have.length.greaterThan(0);
      for (const trigger of spec.triggers) {
        expect(trigger.type, where).to.equal("postgresql");
        const query = trigger.metadata["query"] ?? "";
        const match = DUE_JOBS_QUERY.exec(query);
        expect(match, `${where}: query ${JSON.stringify(query)} is not the due-job count on the claim index`).to.not.equal(null);
        const queue = match![1]!;
        expect(
          queues.map((candidate) => candidate.queue),
          `${where}: queue ${queue} exists`,
        ).to.include(queue);
        expect(target!.args.positionals, `${where}: ${target!.manifest.name} runs ${queue}`).to.include(queue);
        expect(Number(trigger.metadata["targetQueryValue"]), `${where} targetQueryValue`).to.be.greaterThan(0);
        expect(Number(trigger.metadata["activationTargetQueryValue"]), `${where} activationTargetQueryValue`).to.be.at.least(0);
        const authName = trigger.authenticationRef?.name;
        expect(trigger.authenticationRef?.kind ?? "TriggerAuthentication", where).to.equal("TriggerAuthentication");
        const auth = manifests.find((candidate) => candidate.kind === "TriggerAuthentication" && candidate.name === authName);
        expect(auth, `${where} authenticates with a TriggerAuthentication of the manifests`).to.not.equal(undefined);
        const secretRefs = (auth!.doc as unknown as ITriggerAuthentication).spec.secretTargetRef ?? [];
        expect(secretRefs, describeManifest(auth!)).to.deep.include({ parameter: "connection", ...DATABASE_SECRET });
      }
    }
  });

  it("agree with the README's tables of timings and schedules", () => {
    const readme = readFileSync(join(K8S_DIR, "README.md"), "utf8");
    const tables = resourceTables(readme);
    expect(tables, "README.md has tables whose first column is `resource`").to.have.length.greaterThan(0);
    const workers = pods.filter((pod) => pod.args.command === "run");
    const column: Record<string, (pod: StintPod) => string> = {
      queues: ({ args }) => args.positionals.join(", "),
      "job timeout": ({ args }) => args.positionals.map((queue) => formatTimeout(timeoutOf(queue))).join(", "),
      "--max-runtime": ({ args }) => optionValue(args, "--max-runtime") ?? "—",
      "shutdown timeout": (pod) => {
        const texts = podSettings(pod, queues).queues.map(({ settings }) => settingText(pod, settings.shutdownTimeoutMs) ?? "—");
        return [...new Set(texts)].join(", ");
      },
      activeDeadlineSeconds: ({ manifest }) => String(manifest.kind === "CronJob" ? (jobSpecOf(manifest).activeDeadlineSeconds ?? "—") : "—"),
      terminationGracePeriodSeconds: ({ pod }) => String(pod.terminationGracePeriodSeconds ?? "—"),
      schedule: ({ manifest }) => (manifest.kind === "CronJob" ? cronSpecOf(manifest).schedule : "—"),
      timeZone: ({ manifest }) => (manifest.kind === "CronJob" ? (cronSpecOf(manifest).timeZone ?? "—") : "—"),
      concurrencyPolicy: ({ manifest }) => (manifest.kind === "CronJob" ? (cronSpecOf(manifest).concurrencyPolicy ?? "—") : "—"),
      startingDeadlineSeconds: ({ manifest }) => String(manifest.kind === "CronJob" ? (cronSpecOf(manifest).startingDeadlineSeconds ?? "—") : "—"),
      backoffLimit: ({ manifest }) => String(manifest.kind === "CronJob" ? (jobSpecOf(manifest).backoffLimit ?? "—") : "—"),
    };
    for (const rows of tables) {
      expect(rows.map((row) => row["resource"]).sort(), "each table lists every worker resource").to.deep.equal(
        workers.map(({ manifest }) => manifest.name).sort(),
      );
      for (const row of rows) {
        const worker = workers.find(({ manifest }) => manifest.name === row["resource"])!;
        for (const [name, cell] of Object.entries(row)) {
          if (name === "resource") continue;
          expect(column, `README.md column "${name}" is one the test knows`).to.have.property(name);
          expect(cell, `README.md: ${row["resource"]}, ${name}`).to.equal(column[name]!(worker));
        }
      }
    }
  });

  it("copy every YAML snippet of the README from a manifest, unchanged", () => {
    const readme = readFileSync(join(K8S_DIR, "README.md"), "utf8");
    const pattern = /(?:<!-- from: (\S+) -->\n)?```yaml\n([\s\S]*?)```/g;
    for (let match = pattern.exec(readme); match !== null; match = pattern.exec(readme)) {
      const line = readme.slice(0, match.index).split("\n").length;
      expect(match[1], `the YAML snippet at README.md:${line} names its source`).to.be.a("string");
      const source = readFileSync(join(K8S_DIR, "..", match[1]!), "utf8");
      expect(containsRun(normalised(source), normalised(match[2] ?? "")), `the YAML snippet at README.md:${line} differs from ${match[1]}`).to.equal(true);
    }
  });
});
