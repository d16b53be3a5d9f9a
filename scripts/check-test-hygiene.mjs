#!/usr/bin/env node
// Fails when a test is focused or skipped (.only, .skip, xit, xdescribe):
// such a test silently shrinks the suite. Run by `npm run lint` and CI.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const PATTERN = /\b(?:describe|it|context)\.(?:only|skip)\(|\bx(?:it|describe)\(/;
const root = new URL("../packages/", import.meta.url).pathname;
const offences = [];
for (const pkg of readdirSync(root)) {
  const testDir = join(root, pkg, "test");
  if (!exists(testDir)) continue;
  for (const file of walk(testDir)) {
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, index) => {
        if (PATTERN.test(line)) offences.push(`${relative(root, file)}:${index + 1}: ${line.trim()}`);
      });
  }
}
if (offences.length > 0) {
  console.error(`Focused or skipped tests:\n  ${offences.join("\n  ")}`);
  process.exit(1);
}
console.log("check-test-hygiene: no focused or skipped tests");

function exists(path) {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
function* walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* walk(path);
    else if (name.endsWith(".ts")) yield path;
  }
}
