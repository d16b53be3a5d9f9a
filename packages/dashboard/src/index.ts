// Public API of @stint/dashboard. Everything a user imports is re-exported here, explicitly.
export { createDashboard, isBasePath } from "./create-dashboard";
export type { DashboardOptions, DashboardHandler } from "./create-dashboard";
export type { DashboardAuth } from "./http/auth";
export { MIN_TOKEN_LENGTH, MIN_PASSWORD_LENGTH } from "./http/auth";
export type { KnownJobKind, PayloadVisibility } from "./data/payload-policy";
export { DashboardErrorCode } from "./http/request-refused";
