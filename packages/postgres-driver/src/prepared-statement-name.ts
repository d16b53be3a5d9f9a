import { createHash } from "node:crypto";
import { PREPARED_MARK } from "./queries/prepared";

/** Names already computed, by statement text (a few per schema: the hot statements and their variants). */
const NAMES = new Map<string, string>();
const MAX_NAMES = 1_000;

/**
 * The prepared-statement name of a statement text that opens with
 * `PREPARED_MARK`, or `undefined` for any other text. The name is a hash
 * of the whole text, so two texts never share a name and the same text
 * always gets the same one.
 *
 * @example
 * ```ts
 * preparedStatementName(`${PREPARED_MARK}UPDATE …`); // "stint_3f9a0c1d5e7b2468"
 * ```
 */
export function preparedStatementName(text: string): string | undefined {
  if (!text.startsWith(PREPARED_MARK)) return undefined;
  let name = NAMES.get(text);
  if (name === undefined) {
    name = `stint_${createHash("sha256").update(text).digest("hex").slice(0, 24)}`;
    if (NAMES.size >= MAX_NAMES) NAMES.clear();
    NAMES.set(text, name);
  }
  return name;
}
