import { ScaledObject, TriggerAuthentication } from "@kubernetes-models/keda/keda.sh/v1alpha1";
import { Deployment } from "kubernetes-models/apps/v1";
import { CronJob, Job } from "kubernetes-models/batch/v1";
import { ConfigMap, Secret, ServiceAccount } from "kubernetes-models/v1";

/** A generated model class: built from a resource, `validate()` checks it against its schema. */
interface ModelClass {
  new (data: never): { validate(): void };
  readonly apiVersion: string;
  readonly kind: string;
}

/**
 * The kinds the manifests may use, each with the schema it is validated
 * against: Kubernetes' own OpenAPI schemas and KEDA's CRDs. A kind missing
 * here is a test failure, never a silent pass.
 */
const MODELS: readonly ModelClass[] = [CronJob, Job, Deployment, Secret, ConfigMap, ServiceAccount, ScaledObject, TriggerAuthentication];

/**
 * The schema validation of a resource of `apiVersion` and `kind`, or
 * undefined when no schema is known for it. The returned function throws a
 * message listing every violation (JSON pointer and rule).
 *
 * @example
 * ```ts
 * schemaValidatorFor("batch/v1", "CronJob")?.(doc); // throws: data/spec/schedule must be string
 * ```
 */
export function schemaValidatorFor(apiVersion: string, kind: string): ((doc: unknown) => void) | undefined {
  const model = MODELS.find((candidate) => candidate.apiVersion === apiVersion && candidate.kind === kind);
  if (model === undefined) return undefined;
  return (doc) => new model(doc as never).validate();
}
