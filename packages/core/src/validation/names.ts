import { ConfigError, InvalidNameError } from "../errors/config-errors";
import { MAX_QUEUE_NAME_LENGTH } from "../limits";

const SQL_IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;
const QUEUE_NAME = new RegExp(`^[a-z0-9][a-z0-9_.:-]{0,${MAX_QUEUE_NAME_LENGTH - 1}}$`);
/** Names PostgreSQL keeps for itself (`pg_…` schemas and roles) or that every role shares. */
const RESERVED_IDENTIFIER = /^(?:pg_.*|public|information_schema|none)$/;

/**
 * Checks that `name` is a plain lower-case SQL identifier (letters, digits,
 * `_`, at most 63 characters) so it can be quoted into SQL safely, and that
 * it is not one PostgreSQL reserves or shares: `pg_…` (system schemas and
 * roles), `public`, `information_schema`, `none`. stint drops, owns and
 * grants on the schema it is given, so it never takes one it would share.
 * Returns the name; throws `InvalidNameError` before any SQL runs.
 *
 * @example
 * ```ts
 * assertSqlIdentifier("stint", "schema");          // "stint"
 * assertSqlIdentifier('x"; drop table', "schema"); // throws InvalidNameError
 * assertSqlIdentifier("pg_catalog", "schema");     // throws InvalidNameError (reserved)
 * ```
 */
export function assertSqlIdentifier(name: unknown, what: string): string {
  if (typeof name !== "string" || !SQL_IDENTIFIER.test(name)) {
    throw new InvalidNameError(
      `${what} must be a plain SQL identifier (lower-case letters, digits and _, starting with a letter or _, at most 63 characters), got ${describeName(name)}`,
    );
  }
  if (RESERVED_IDENTIFIER.test(name)) {
    throw new InvalidNameError(
      `${what} ${JSON.stringify(name)} is reserved or shared in PostgreSQL (pg_…, public, information_schema, none); give stint a name of its own`,
    );
  }
  return name;
}

/**
 * Checks a queue name: lower-case letters, digits and `_ . : -`, starting
 * with a letter or digit, at most 128 characters. Returns it. Job kinds,
 * the store's enqueue and claim paths and the CLI all check through here,
 * so no path stores a queue name another path would refuse.
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
      `queue name must be 1-${MAX_QUEUE_NAME_LENGTH} characters of lower-case letters, digits and _ . : - starting with a letter or digit, got ${describeName(name)}`,
    );
  }
  return name;
}

/** Longest queue name an operator may act on when a row written by SQL breaks the naming rule. */
export const MAX_STORED_QUEUE_NAME_LENGTH = 512;

/**
 * Checks the name of a queue an operator acts on (pause, resume, limits,
 * retry or cancel in bulk): one the naming rule accepts, or, for a queue
 * written by SQL that breaks the rule, any text of 1 to 512 characters
 * without control characters. Those statements bind the name as a
 * parameter and never create jobs under it; a store creates controls for
 * such a name only where a `queues` row already holds it.
 *
 * @example
 * ```ts
 * assertStoredQueueName("billing / eu west"); // "billing / eu west"
 * assertStoredQueueName("a\nb");              // throws InvalidNameError
 * ```
 */
export function assertStoredQueueName(name: unknown): string {
  // eslint-disable-next-line no-control-regex
  if (typeof name !== "string" || name.length === 0 || name.length > MAX_STORED_QUEUE_NAME_LENGTH || /[\u0000-\u001f\u007f]/.test(name)) {
    throw new InvalidNameError(`queue name must be 1-${MAX_STORED_QUEUE_NAME_LENGTH} characters without control characters, got ${describeName(name)}`);
  }
  return name;
}

/**
 * Checks a schedule name: the same alphabet as queue names (lower-case
 * letters, digits and `_ . : -`, starting with a letter or digit, at most
 * 128 characters), since it becomes part of each fire's dedupe key.
 * `defineSchedule` and the store's `syncSchedules` both check through here.
 *
 * @example
 * ```ts
 * assertScheduleName("weekly-report"); // "weekly-report"
 * assertScheduleName("weekly report"); // throws InvalidNameError
 * ```
 */
export function assertScheduleName(name: unknown): string {
  if (typeof name !== "string" || !QUEUE_NAME.test(name)) {
    throw new InvalidNameError(
      `schedule name must be 1-${MAX_QUEUE_NAME_LENGTH} characters of lower-case letters, digits and _ . : - starting with a letter or digit, got ${describeName(name)}`,
    );
  }
  return name;
}

/**
 * Checks a free-form key that is stored as text (a dedupe key, an effect
 * key): a string of 1 to `maxLength` characters that PostgreSQL stores
 * byte for byte. That excludes NUL (`text` cannot hold it) and unpaired
 * UTF-16 surrogates (they cannot be encoded as UTF-8 and would come back
 * as U+FFFD). Anything else — quotes, `;`, comments, right-to-left marks —
 * is data and is stored as given. Throws `ConfigError` naming `option`.
 *
 * @example
 * ```ts
 * assertStorableKey("dedupeKey", "invoice:812", 512);     // "invoice:812"
 * assertStorableKey("dedupeKey", "a\u0000b", 512);        // throws ConfigError
 * ```
 */
export function assertStorableKey(option: string, key: unknown, maxLength: number): string {
  if (typeof key !== "string" || key.length === 0 || key.length > maxLength) {
    throw new ConfigError(option, `must be a non-empty string of at most ${maxLength} characters, got ${describeName(key)}`);
  }
  const problem = unstorableText(key);
  if (problem !== undefined) throw new ConfigError(option, `${problem}, got ${describeName(key)}`);
  return key;
}

/**
 * Why PostgreSQL could not store `text` unchanged (as `text` or inside
 * `jsonb`), or `undefined` when it can: a NUL character, or an unpaired
 * UTF-16 surrogate.
 */
export function unstorableText(text: string): string | undefined {
  if (text.includes("\u0000")) return "must not contain NUL (U+0000), which PostgreSQL text cannot store";
  if (!isWellFormed(text)) return "must not contain an unpaired UTF-16 surrogate, which UTF-8 cannot encode";
  return undefined;
}

function isWellFormed(text: string): boolean {
  const native = (text as { isWellFormed?: () => boolean }).isWellFormed;
  if (typeof native === "function") return native.call(text);
  return !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);
}

/** The name for an error message: quoted, escaped, and cut so a 1 MB name does not become a 1 MB message. */
function describeName(name: unknown): string {
  if (typeof name !== "string") return String(name);
  const shown = JSON.stringify(name.length > 200 ? name.slice(0, 200) : name);
  return name.length > 200 ? `${shown}… (${name.length} characters)` : shown;
}
