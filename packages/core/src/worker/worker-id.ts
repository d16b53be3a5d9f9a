import { randomBytes } from "node:crypto";
import { hostname } from "node:os";

const randomToken = randomBytes(4).toString("hex");
const processToken = `${hostname()}:${process.pid}:${randomToken}`;
let instances = 0;

/**
 * This process incarnation's identity: host, pid and a random token drawn
 * at start-up. A restarted pod with the same name and even the same pid
 * gets a different one, so it can never pass the ownership fence of its
 * predecessor's jobs. Connections carry it in `application_name`.
 *
 * @example
 * ```ts
 * processIdentity(); // "web-7f9c:4121:9b1e03aa"
 * ```
 */
export function processIdentity(): string {
  return processToken;
}

/**
 * A new identity for one worker instance, recorded as the owner
 * (`locked_by`) of every job it claims: the process's random token, plus
 * `.n` for the second and later instances in one process. It is short on
 * purpose: it is written into the job row at every claim and completion,
 * and the full process identity (host, pid, token) appears in the worker's
 * start line and in its connections' `application_name`, which contains
 * the token.
 *
 * @example
 * ```ts
 * newWorkerId(); // "9b1e03aa", then "9b1e03aa.2", …
 * ```
 */
export function newWorkerId(): string {
  instances += 1;
  return instances === 1 ? randomToken : `${randomToken}.${instances}`;
}

/**
 * The `application_name` of a stint connection: `stint:<role>:<process identity>`,
 * cut to PostgreSQL's 63 bytes, so an operator (or a test) can find a
 * process's connections in `pg_stat_activity`.
 *
 * @example
 * ```ts
 * applicationName("worker"); // "stint:worker:web-7f9c:4121:9b1e03aa"
 * ```
 */
export function applicationName(role: string): string {
  return Buffer.from(`stint:${role}:${processToken}`)
    .subarray(0, 63)
    .toString("utf8")
    .replace(/\uFFFD+$/, "");
}
