import { InvalidNameError } from "../errors/config-errors";

const SQL_IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;
const QUEUE_NAME = /^[a-z0-9][a-z0-9_.:-]{0,127}$/;

/**
 * Checks that `name` is a plain lower-case SQL identifier (letters, digits,
 * `_`, at most 63 characters) so it can be quoted into SQL safely. Returns it.
 *
 * @example
 * ```ts
 * assertSqlIdentifier("stint", "schema");          // "stint"
 * assertSqlIdentifier('x"; drop table', "schema"); // throws InvalidNameError
 * ```
 */
export function assertSqlIdentifier(name: unknown, what: string): string {
  if (typeof name !== "string" || !SQL_IDENTIFIER.test(name)) {
    throw new InvalidNameError(
      `${what} must be a plain SQL identifier (lower-case letters, digits and _, starting with a letter or _, at most 63 characters), got ${JSON.stringify(name)}`,
    );
  }
  return name;
}

/**
 * Checks a queue name: lower-case letters, digits and `_ . : -`, starting
 * with a letter or digit, at most 128 characters. Returns it.
 *
 * @example
 * ```ts
 * assertQueueName("send-invoice"); // "send-invoice"
 * assertQueueName("Send Invoice"); // throws InvalidNameError
 * ```
 */
export function assertQueueName(name: unknown): string {
  if (typeof name !== "string" || !QUEUE_NAME.test(name)) {
    throw new InvalidNameError(
      `queue name must be 1-128 characters of lower-case letters, digits and _ . : - starting with a letter or digit, got ${JSON.stringify(name)}`,
    );
  }
  return name;
}
