#!/usr/bin/env node
// Fails when @stint/core imports a database library or the driver: core
// declares interfaces; drivers implement them. Run by `npm run lint` and CI.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

// Core's own subpath exports (`@stint/core/testing`, `@stint/core/driver`) are core, not a driver.
const FORBIDDEN = [/^pg(\/|$)/, /^kysely(\/|$)/, /^pg-/, /^@stint\/(?!core(\/|$))/, /postgres-driver/];
const root = new URL("../packages/core/", import.meta.url).pathname;
const offences = [];

for (const file of walk(root)) {
  const text = readFileSync(file, "utf8");
  for (const match of text.matchAll(/(?:from\s+|import\s*\(\s*|require\s*\(\s*)["']([^"']+)["']/g)) {
    if (FORBIDDEN.some((pattern) => pattern.test(match[1]))) offences.push(`${relative(root, file)} imports "${match[1]}"`);
  }
}
for (const field of ["dependencies", "peerDependencies", "optionalDependencies"]) {
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  for (const name of Object.keys(manifest[field] ?? {})) {
    if (FORBIDDEN.some((pattern) => pattern.test(name))) offences.push(`package.json ${field} lists "${name}"`);
  }
}
if (offences.length > 0) {
  console.error(`@stint/core must not depend on a database library or driver:\n  ${offences.join("\n  ")}`);
  process.exit(1);
}
console.log("check-core-imports: @stint/core imports no database code");

function* walk(dir) {
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name === "dist") continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* walk(path);
    else if (/\.(ts|mts|cts|js|mjs|cjs)$/.test(name)) yield path;
  }
}
