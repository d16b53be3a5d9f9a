import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";

/** packages/examples/k8s, from dist/test/k8s. */
export const K8S_DIR = join(__dirname, "..", "..", "..", "k8s");

/** One YAML document of a manifest file: a Kubernetes resource, not yet validated. */
export interface Manifest {
  /** File name inside {@link K8S_DIR}. */
  readonly file: string;
  /** Position of the document in its file, from 0. */
  readonly index: number;
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly doc: Readonly<Record<string, unknown>>;
}

/** The manifest files `kubectl apply -f k8s/` would read: `*.yaml`, `*.yml` and `*.json`, not recursive. */
export function manifestFiles(dir: string = K8S_DIR): readonly string[] {
  return readdirSync(dir)
    .filter((file) => /\.(ya?ml|json)$/.test(file))
    .sort();
}

/**
 * Parses every document of every manifest file. Throws on a YAML error or
 * warning (duplicate keys included) and on a document that is not an object
 * with `apiVersion`, `kind` and `metadata.name`; skips empty documents.
 */
export function loadManifests(dir: string = K8S_DIR): readonly Manifest[] {
  const manifests: Manifest[] = [];
  for (const file of manifestFiles(dir)) {
    parseAllDocuments(readFileSync(join(dir, file), "utf8")).forEach((document, index) => {
      const problems = [...document.errors, ...document.warnings];
      if (problems.length > 0) throw new Error(`${file} document ${index}: ${problems.map((problem) => problem.message).join("; ")}`);
      const doc: unknown = document.toJS();
      if (doc === null || doc === undefined) return;
      if (typeof doc !== "object" || Array.isArray(doc)) throw new Error(`${file} document ${index} is not a mapping`);
      const record = doc as Record<string, unknown>;
      const metadata = record["metadata"] as Record<string, unknown> | undefined;
      const { apiVersion, kind } = record;
      const name = metadata?.["name"];
      if (typeof apiVersion !== "string" || typeof kind !== "string" || typeof name !== "string") {
        throw new Error(`${file} document ${index} lacks apiVersion, kind or metadata.name`);
      }
      manifests.push({ file, index, apiVersion, kind, name, doc: record });
    });
  }
  return manifests;
}

/** `file#index (Kind/name)`, for assertion messages. */
export function describeManifest(manifest: Manifest): string {
  return `${manifest.file}#${manifest.index} (${manifest.kind}/${manifest.name})`;
}
