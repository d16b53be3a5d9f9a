import { CompiledQuery, type Kysely, type QueryResult, type RawBuilder } from "kysely";
import { directQueriesOf } from "./direct-queries";

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

/** A statement's text and, in order, the names of the values behind `$1`, `$2`, …. */
interface Compiled {
  readonly sql: string;
  readonly names: readonly string[];
}

/**
 * Hot statements built and compiled once per variant instead of on every
 * call. A builder returns the statement with {@link valueSlot}s in place of
 * its values; the text and the order of its parameters are kept under the
 * variant's key (the schema and whatever changes the text), and each call
 * only fills in its values. Building a statement of a few dozen template
 * parts and compiling it cost about 30 µs per call on the path from enqueue
 * to handler start; the kept text is also the same string on every call,
 * so naming it as a prepared statement is a map lookup.
 *
 * @example
 * ```ts
 * const byQueue = new CompiledStatements<{ id: string }>();
 * const { rows } = await byQueue.execute(db, `${schema}`, () => sql`SELECT id FROM t WHERE queue = ${valueSlot("queue")}`, { queue: "mail" });
 * ```
 */
export class CompiledStatements<R> {
  readonly #compiled = new Map<string, Compiled>();

  /**
   * Runs the variant `key` (built by `build` the first time) with `values`, on `executor` (a database or a transaction).
   * Not an `async` function: it returns the driver's own promise, so its caller's `await` is the only turn of the
   * microtask queue between the answer and the caller (an async wrapper returning a promise adds two more). A
   * statement that cannot be compiled rejects, as an async function would.
   */
  execute(executor: Kysely<any>, key: string, build: () => RawBuilder<R>, values: object): Promise<QueryResult<R>> {
    let compiled = this.#compiled.get(key);
    if (compiled === undefined) {
      try {
        compiled = compile(executor, build());
      } catch (error) {
        return Promise.reject(error);
      }
      this.#compiled.set(key, compiled);
    }
    const parameters = compiled.names.map((name) => (values as Readonly<Record<string, unknown>>)[name]);
    // Outside a transaction the statement skips Kysely (its connection handling added about 40 µs before the send to
    // a worker idle between jobs, on the path from enqueue to handler start) for the pool or its hot connection.
    const direct = directQueriesOf(executor);
    if (direct !== undefined) return direct.query<R & object>(compiled.sql, parameters);
    return executor.executeQuery<R>(CompiledQuery.raw(compiled.sql, parameters));
  }
}

function compile(executor: Kysely<any>, statement: RawBuilder<unknown>): Compiled {
  const { sql, parameters } = statement.compile(executor);
  const names = parameters.map((parameter, index) => {
    if (!(parameter instanceof Slot)) throw new TypeError(`parameter $${index + 1} of a compiled statement is a value, not a valueSlot`);
    return parameter.name;
  });
  return Object.freeze({ sql, names: Object.freeze(names) });
}
