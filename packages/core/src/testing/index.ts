// The test kit of @stint/core (`@stint/core/testing`): what a user needs to test workers without a database,
// and what a store implementer needs to prove a JobStore. Nothing here is loaded by `@stint/core` itself.
export { InMemoryJobStore } from "./memory/in-memory-job-store";
export type { InMemoryJobStoreOptions } from "./memory/in-memory-job-store";
export { MemoryTransaction } from "./memory/memory-transaction";
export type { MemoryTransactionState } from "./memory/memory-transaction";
export type { StartJobParams } from "./memory/memory-start-job";
export { runJob } from "./run-job";
export { runBatch } from "./run-batch";
export type { RunJobOptions, WorkerResult } from "./run-job";
export type { RunJobResult, RunJobFacts } from "./run-job-result";
export { ManualClock } from "./manual-clock";
export { settle } from "./settle";
export { eventually } from "./eventually";
export type { EventuallyOptions, Truthy } from "./eventually";
export { describeJobStoreConformance } from "./conformance/job-store-conformance";
export { describeScheduleStoreConformance } from "./conformance/schedule-store-conformance";
export type { JobStoreHarness, JobStoreHarnessFactory, ScheduleStoreHarness, ScheduleStoreHarnessFactory } from "./conformance/conformance-harness";
export { newJob, rejectionOf } from "./conformance/conformance-harness";
