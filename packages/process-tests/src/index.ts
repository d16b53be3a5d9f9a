// The probe worker, run as real OS processes by this package's tests and by @stint/bench.
export { ProbeJob, parseProbe } from "./probe-job";
export type { Probe } from "./probe-job";
export { ProbeWorker, PROBE_SETTINGS, createExecutionsTable } from "./probe-worker";
export type { ProbeSettings } from "./probe-worker";
export { startProbeProcess, spawnProbeWorkers } from "./spawn-probe-workers";
export type { ProbeProcess, ProbeProcessOptions, ProbeProcessReport } from "./spawn-probe-workers";
export { StepProbeJob, parseStepProbe } from "./step-probe-job";
export type { StepProbe, StepProbeResult } from "./step-probe-job";
export { StepProbeWorker } from "./step-probe-worker";
