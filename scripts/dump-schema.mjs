#!/usr/bin/env node
// Writes packages/postgres-driver/schema.sql: the migrated schema as the
// database's catalogs describe it, so that a schema change shows in review.
// A test fails when the committed file and the migrations disagree.
//
//   npm run build && node scripts/with-postgres.mjs node scripts/dump-schema.mjs
//
// Needs DATABASE_URL; the migrations run in a throwaway schema that is dropped after.
import "reflect-metadata";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const driver = require("../packages/postgres-driver/dist/src/index.js");
const { createTestSchema } = require("../packages/postgres-driver/dist/src/testing/index.js");

const target = new URL("../packages/postgres-driver/schema.sql", import.meta.url);
const test = await createTestSchema({ prefix: "stint_dump", maxConnections: 2 });
try {
  writeFileSync(target, await driver.describeSchema(test.db, test.schema));
  console.log(`dump-schema: wrote ${target.pathname}`);
} finally {
  await test.drop();
}
