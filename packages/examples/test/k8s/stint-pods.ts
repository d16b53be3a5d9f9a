import { expect } from "chai";
import type { IDeployment } from "kubernetes-models/apps/v1/Deployment";
import type { ICronJob } from "kubernetes-models/batch/v1/CronJob";
import type { IJob } from "kubernetes-models/batch/v1/Job";
import type { IContainer } from "kubernetes-models/v1/Container";
import type { IPodSpec } from "kubernetes-models/v1/PodSpec";
import type { IProbe } from "kubernetes-models/v1/Probe";
import { describeManifest, type Manifest } from "./load-manifests";
import { parseStintArgs, type StintArgs } from "./stint-args";

/** A pod template of the manifests with its one container and the `stint` command line it runs. */
export interface StintPod {
  readonly manifest: Manifest;
  readonly pod: IPodSpec;
  readonly container: IContainer;
  readonly args: StintArgs;
}

/** The pod template of a CronJob, Job or Deployment; undefined for other kinds. */
export function podSpecOf(manifest: Manifest): IPodSpec | undefined {
  switch (manifest.kind) {
    case "CronJob":
      return (manifest.doc as unknown as ICronJob).spec?.jobTemplate.spec?.template.spec;
    case "Job":
      return (manifest.doc as unknown as IJob).spec?.template.spec;
    case "Deployment":
      return (manifest.doc as unknown as IDeployment).spec?.template.spec;
    default:
      return undefined;
  }
}

/**
 * Every pod template of the manifests, with its one container and the
 * `stint` command line of its args (the image's entrypoint is the CLI, so a
 * container sets no `command`).
 */
export function stintPods(manifests: readonly Manifest[]): readonly StintPod[] {
  return manifests.flatMap((manifest) => {
    const pod = podSpecOf(manifest);
    if (pod === undefined) return [];
    expect(pod.containers, `${describeManifest(manifest)} runs one container`).to.have.length(1);
    const container = pod.containers[0]!;
    expect(container.command, `${describeManifest(manifest)} keeps the image's entrypoint (the CLI)`).to.equal(undefined);
    expect(container.args, `${describeManifest(manifest)} has container args`).to.be.an("array");
    return [{ manifest, pod, container, args: parseStintArgs(container.args!) }];
  });
}

/** The Job spec of a CronJob's template or of a Job. */
export function jobSpecOf(manifest: Manifest): NonNullable<IJob["spec"]> {
  const spec = manifest.kind === "CronJob" ? (manifest.doc as unknown as ICronJob).spec?.jobTemplate.spec : (manifest.doc as unknown as IJob).spec;
  expect(spec, `${describeManifest(manifest)} has a Job spec`).to.not.equal(undefined);
  return spec!;
}

/** The spec of a CronJob. */
export function cronSpecOf(manifest: Manifest): NonNullable<ICronJob["spec"]> {
  return (manifest.doc as unknown as ICronJob).spec!;
}

/** The port a probe reaches, with a named port resolved through the container's ports. */
export function probePort(probe: IProbe, container: IContainer): number | undefined {
  const port = probe.httpGet?.port;
  return typeof port === "number" ? port : container.ports?.find((candidate) => candidate.name === port)?.containerPort;
}
