// Test helpers of @stint/postgres-driver, imported as "@stint/postgres-driver/testing".
export { createTestSchema } from "./create-test-schema";
export type { TestSchema, TestSchemaOptions } from "./create-test-schema";
