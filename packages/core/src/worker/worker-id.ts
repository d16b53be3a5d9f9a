import { randomBytes } from "node:crypto";
import { hostname } from "node:os";

const processToken = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
const instancesPerQueue = new Map<string, number>();

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
 * A new identity for one worker instance: its queue and the process
 * identity, plus `#n` for a second instance of the same queue in one process.
 *
 * @example
 * ```ts
 * newWorkerId("send-invoice"); // "send-invoice@web-7f9c:4121:9b1e03aa"
 * ```
 */
export function newWorkerId(queue: string): string {
  const count = (instancesPerQueue.get(queue) ?? 0) + 1;
  instancesPerQueue.set(queue, count);
  return `${queue}@${processToken}${count === 1 ? "" : `#${count}`}`;
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
  return Buffer.from(`stint:${role}:${processToken}`).subarray(0, 63).toString("utf8").replace(/\uFFFD+$/, "");
}
