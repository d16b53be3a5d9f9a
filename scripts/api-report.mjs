#!/usr/bin/env node
// The public API of every published package, one report per entry point,
// written by API Extractor and kept in packages/<package>/api/<entry>.api.md.
//
//   node scripts/api-report.mjs            checks the reports (npm run api:check; npm test runs it)
//   node scripts/api-report.mjs --update   writes them (npm run api:update)
//
// The entry points come from each non-private workspace's package.json
// `exports` map ("." is index, "./driver" is driver, ...), so an entry added
// there is reported without a change here; "./internal" is not public API
// and has no report. Run `npm run build` first: the
// reports are made from the declaration files in dist.
//
// A public signature may use a type its own entry point does not export only
// when another entry point of the same package exports it (an application's
// `JobStore` names the store's parameter types, which `@stint/core/driver`
// exports). Any other such type is an error: export it, or stop using it.
//
// Options, for tests: --only <import path> (one entry point), --report-dir
// <dir> (read and write <dir>/<package folder>-<entry>.api.md instead).
import { Extractor, ExtractorConfig, ExtractorLogLevel } from "@microsoft/api-extractor";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, relative } from "node:path";
import { parseArgs } from "node:util";

const ROOT = new URL("..", import.meta.url).pathname;
const { values: options } = parseArgs({
  options: { update: { type: "boolean", default: false }, only: { type: "string" }, "report-dir": { type: "string" } },
});

/** How the declaration files are read: as a Node 16 application would, with the Node globals they may name. */
const COMPILER_OPTIONS = { target: "ES2022", lib: ["ES2023"], module: "node16", moduleResolution: "node16", types: ["node"], strict: true, skipLibCheck: true };

/** Messages that say nothing about the shape of the API: release tags (stint has none), doc style, links between entry points. */
const QUIET = ["ae-missing-release-tag", "ae-undocumented", "ae-unresolved-link", "ae-forgotten-export"];

const allEntries = publicEntryPoints();
const entries = allEntries.filter((entry) => options.only === undefined || entry.importPath === options.only);
if (entries.length === 0) fail(`no entry point to report${options.only === undefined ? "" : ` named ${options.only}`}`, "Name one of the packages' exports.");
const scratch = mkdtempSync(join(tmpdir(), "stint-api-report-"));
/** Problems of the API itself (fixed in the code), and reports that differ from the API (fixed by `npm run api:update`). */
const problems = [];
const stale = [];
try {
  const reports = entries.map((entry) => ({ entry, ...extract(entry) }));
  for (const [index, report] of reports.entries()) {
    const { entry, forgotten, warnings } = report;
    problems.push(...warnings.map((warning) => `${entry.importPath}: ${warning}`));
    const siblings = siblingExports(entry, reports);
    for (const name of forgotten.filter((symbol) => !siblings.has(symbol))) {
      problems.push(`${entry.importPath}: its API uses ${name}, which no entry point of ${entry.packageName} exports; export it, or stop using it`);
    }
    const earlier = new Set(
      reports
        .slice(0, index)
        .filter((other) => other.entry.packageName === entry.packageName)
        .flatMap((other) => other.names),
    );
    for (const name of report.names.filter((exported) => earlier.has(exported))) {
      problems.push(`${entry.packageName}: ${name} is exported by two of its entry points; give each name one home (an implementer may import from both)`);
    }
    compareOrWrite(entry, report.text);
  }
  if (options.only === undefined) removeOrphans(entries);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
if (problems.length > 0)
  console.error(`api-report: ${problems.join("\napi-report: ")}\n\nFix these in the code: the report records the API, it cannot make a type nameable.\n`);
if (stale.length > 0) fail(stale.join("\n"));
if (problems.length > 0) process.exit(1);
console.log(`api-report: ${entries.length} entry point${entries.length === 1 ? "" : "s"} ${options.update ? "written" : "up to date"}`);

/** Every entry point of every workspace that is not private, from its `exports` map. */
function publicEntryPoints() {
  const workspaces = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).workspaces ?? [];
  return workspaces.flatMap((folder) => {
    const packageDir = join(ROOT, folder);
    const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
    if (manifest.private === true) return [];
    const exportsMap = typeof manifest.exports === "object" && manifest.exports !== null ? manifest.exports : { ".": manifest.exports ?? manifest.types };
    // An "./internal" entry holds what stint's own packages share and may change in any release:
    // it is not public API, so it has no report and the check below does not count its names as exported.
    const publicSubpaths = Object.entries(exportsMap).filter(([subpath]) => subpath !== "./internal");
    return publicSubpaths.map(([subpath, target]) => {
      const types = typeof target === "string" ? target : target?.types;
      if (subpath.includes("*") || typeof types !== "string" || !types.endsWith(".d.ts")) {
        fail(
          `${manifest.name}: exports["${subpath}"] names no declaration file ("types": "….d.ts")`,
          "Give every entry point of the exports map a types condition.",
        );
      }
      const name = subpath === "." ? "index" : subpath.replace(/^\.\//, "").replaceAll("/", "-");
      return {
        packageName: manifest.name,
        packageDir,
        importPath: subpath === "." ? manifest.name : `${manifest.name}/${subpath.replace(/^\.\//, "")}`,
        name,
        declarations: join(packageDir, types),
      };
    });
  });
}

/** Runs API Extractor on one entry point: its report text, the types it uses but does not export, and any other warning. */
function extract(entry) {
  if (!existsSync(entry.declarations)) fail(`${relative(ROOT, entry.declarations)} does not exist`, "Run `npm run build` first.");
  const folder = join(scratch, `${basename(entry.packageDir)}-${entry.name}`);
  mkdirSync(folder);
  const config = ExtractorConfig.prepare({
    configObject: {
      projectFolder: entry.packageDir,
      mainEntryPointFilePath: entry.declarations,
      // Only the declaration files the entry point reaches: the packages' own tsconfig would load their tests too.
      compiler: { overrideTsconfig: { compilerOptions: COMPILER_OPTIONS, files: [entry.declarations] } },
      apiReport: { enabled: true, reportFolder: folder, reportTempFolder: folder, reportFileName: entry.name },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        compilerMessageReporting: { default: { logLevel: "warning" } },
        extractorMessageReporting: {
          default: { logLevel: "warning" },
          ...Object.fromEntries(QUIET.map((id) => [id, { logLevel: "none" }])),
        },
        tsdocMessageReporting: { default: { logLevel: "none" } },
      },
    },
    configObjectFullPath: join(entry.packageDir, "api-extractor.json"),
    packageJsonFullPath: join(entry.packageDir, "package.json"),
  });
  const forgotten = [];
  const warnings = [];
  const result = Extractor.invoke(config, {
    localBuild: true,
    messageCallback: (message) => {
      if (message.messageId === "ae-forgotten-export") {
        forgotten.push(/The symbol "([^"]+)"/.exec(message.text)?.[1] ?? message.text);
      } else if (message.logLevel === ExtractorLogLevel.Warning || message.logLevel === ExtractorLogLevel.Error) {
        warnings.push(`${message.messageId}: ${message.text}${message.sourceFilePath === undefined ? "" : ` (${relative(ROOT, message.sourceFilePath)})`}`);
      }
      message.handled = true;
    },
  });
  if (!result.succeeded && warnings.length === 0) warnings.push("API Extractor failed");
  const text = readFileSync(join(folder, `${entry.name}.api.md`), "utf8").replace(
    /^## API Report File for "[^"]*"/m,
    `## API Report File for "${entry.importPath}"`,
  );
  return { text, names: exportedNames(text), forgotten: [...new Set(forgotten)], warnings };
}

/** What the other entry points of `entry`'s package export: from this run's reports, else from their committed ones. */
function siblingExports(entry, reports) {
  const names = new Set();
  for (const sibling of allEntries.filter((other) => other.packageName === entry.packageName && other !== entry)) {
    const fresh = reports.find((report) => report.entry === sibling);
    const path = reportPath(sibling);
    const text = fresh?.text ?? (existsSync(path) ? readFileSync(path, "utf8") : "");
    for (const name of exportedNames(text)) names.add(name);
  }
  return names;
}

/** The names a report's entry point exports: its own declarations and what it re-exports. */
function exportedNames(report) {
  const declared = [...report.matchAll(/^export (?:declare )?(?:abstract )?(?:class|interface|type|function|const|enum|namespace) (\w+)/gm)];
  const reexported = [...report.matchAll(/^export \{ (\w+) \}/gm)];
  return [...new Set([...declared, ...reexported].map((match) => match[1]))];
}

function reportPath(entry) {
  const dir = options["report-dir"];
  return dir === undefined ? join(entry.packageDir, "api", `${entry.name}.api.md`) : join(dir, `${basename(entry.packageDir)}-${entry.name}.api.md`);
}

function compareOrWrite(entry, text) {
  const path = reportPath(entry);
  const committed = existsSync(path) ? readFileSync(path, "utf8") : undefined;
  if (committed === text) return;
  if (options.update) {
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, text);
    console.log(`api-report: wrote ${relative(ROOT, path)}`);
    return;
  }
  const fresh = join(scratch, `fresh-${basename(path)}`);
  writeFileSync(fresh, text);
  stale.push(
    committed === undefined
      ? `${entry.importPath}: ${relative(ROOT, path)} is missing`
      : `${entry.importPath}: ${relative(ROOT, path)} is out of date:\n${difference(path, fresh)}`,
  );
}

/** Reports in the packages' api/ folders that no entry point writes any more. */
function removeOrphans(known) {
  if (options["report-dir"] !== undefined) return;
  const expected = new Set(known.map(reportPath));
  for (const packageDir of new Set(known.map((entry) => entry.packageDir))) {
    const folder = join(packageDir, "api");
    if (!existsSync(folder)) continue;
    for (const file of readdirSync(folder).filter((name) => name.endsWith(".api.md"))) {
      const path = join(folder, file);
      if (expected.has(path)) continue;
      if (options.update) unlinkSync(path);
      else stale.push(`${relative(ROOT, path)} reports no entry point of the package's exports map any more`);
    }
  }
}

/** The first lines of a unified diff from the committed report to the fresh one. */
function difference(committed, fresh) {
  const diff = spawnSync("git", ["diff", "--no-index", "--no-color", "--unified=1", committed, fresh], { encoding: "utf8" });
  const lines = (diff.stdout || diff.stderr || "").split("\n").slice(4);
  return lines.slice(0, 40).join("\n") + (lines.length > 40 ? `\n… (${lines.length - 40} more lines)` : "");
}

function fail(message, advice = "Run `npm run api:update`, review the change to packages/*/api/*.api.md, and commit it with the change that caused it.") {
  console.error(`api-report: ${message}\n\n${advice}`);
  process.exit(1);
}
