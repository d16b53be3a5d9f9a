#!/usr/bin/env node
// The `stint` command. npm links this file into node_modules/.bin when the
// package is installed (and for every workspace on `npm ci`), before anything
// is compiled, so it is plain JavaScript that hands over to the compiled CLI.
// In a checkout that has not been built yet it says how to build instead of
// failing with a stack trace.
"use strict";

const { existsSync } = require("node:fs");
const { join } = require("node:path");

const entry = join(__dirname, "..", "dist", "src", "bin", "stint.js");

if (!existsSync(entry)) {
  process.stderr.write(`stint: the CLI is not built (${entry} is missing): run \`npm run build\` at the root of the stint repository\n`);
  // 78: a configuration error, as the CLI itself reports one.
  process.exit(78);
}

require(entry);
