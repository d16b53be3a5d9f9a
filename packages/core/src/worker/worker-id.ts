import { randomBytes } from "node:crypto";
import { hostname } from "node:os";

/**
 * A new identity for one worker incarnation: host, pid and a random token.
 * The random part means a restarted pod with the same name can never pass
 * the ownership fence of its predecessor's jobs.
 *
 * @example
 * ```ts
 * newWorkerId("send-invoice"); // "send-invoice@web-7f9c:4121:9b1e03aa"
 * ```
 */
export function newWorkerId(queue: string): string {
  return `${queue}@${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
}
