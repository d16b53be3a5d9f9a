import { ConfigError } from "../../errors/config-errors";

// Placeholder until the in-memory store keeps workflows.
function unsupported(): never {
  throw new ConfigError("store", "the in-memory store does not keep workflows yet");
}

export const enqueueWorkflow = unsupported;
export const addWorkflowSteps = unsupported;
export const readDependencies = unsupported;
export const getWorkflow = unsupported;
export const listWorkflows = unsupported;
export const cancelWorkflow = unsupported;
