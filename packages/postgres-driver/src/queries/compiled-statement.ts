import type { RawBuilder } from "kysely";
import type { Statement } from "../connection/statement";
import { compileStatement, statementName } from "./named-statement";

/** Stands in for one named value while a statement is compiled (see {@link CompiledStatements}). */
class Slot {
  constructor(readonly name: string) {}
}

/**
 * A placeholder for the value `name` in a statement built for
 * {@link CompiledStatements}: it compiles to a `$n` parameter like any value,
 * and each call puts its own value of `name` there. Typed as the value it
 * stands for, so statement builders need no change.
 *
 * @example
 * ```ts
 * const queue = valueSlot<string>("queue");
 * ```
 */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the type of the value the slot stands for
export function valueSlot<T>(name: string): T {
  return new Slot(name) as unknown as T;
}

/** A statement's name and text and, in order, the names of the values behind `$1`, `$2`, …. */
interface Compiled {
  readonly name: string;
  readonly text: string;
  readonly slots: readonly string[];
}

/**
 * Hot statements built and compiled once per variant instead of on every
 * call. A builder returns the statement with {@link valueSlot}s in place of
 * its values; the text, its prepared-statement name and the order of its
 * parameters are kept under the variant's key (the schema and whatever
 * changes the text), and each call only fills in its values.
 *
 * @example
 * ```ts
 * const byQueue = new CompiledStatements();
 * const statement = byQueue.statement(`${schema}`, () => sql`SELECT id FROM t WHERE queue = ${valueSlot("queue")}`, { queue: "mail" });
 * const { rows } = await statements.run<{ id: string }>(statement);
 * ```
 */
export class CompiledStatements {
  readonly #compiled = new Map<string, Compiled>();

  /** The variant `key` (built by `build` the first time) with `values` in its slots; throws when the builder put a value where a slot belongs. */
  statement(key: string, build: () => RawBuilder<unknown>, values: object): Statement {
    let compiled = this.#compiled.get(key);
    if (compiled === undefined) {
      compiled = compile(build());
      this.#compiled.set(key, compiled);
    }
    const given = values as Readonly<Record<string, unknown>>;
    return { name: compiled.name, text: compiled.text, values: compiled.slots.map((slot) => given[slot]) };
  }
}

function compile(statement: RawBuilder<unknown>): Compiled {
  const { text, values } = compileStatement(statement);
  const slots = values.map((value, index) => {
    if (!(value instanceof Slot)) throw new TypeError(`parameter $${index + 1} of a compiled statement is a value, not a valueSlot`);
    return value.name;
  });
  return Object.freeze({ name: statementName(text), text, slots: Object.freeze(slots) });
}
