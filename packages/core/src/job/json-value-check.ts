import { PayloadError } from "../errors/config-errors";
import { unstorableText } from "../validation/names";
import { MAX_PAYLOAD_DEPTH } from "../limits";

/**
 * Refuses, with a `PayloadError` naming the value's path
 * (`payload.items[3].tags: a Set cannot be stored as JSON; convert it to an
 * array`), every value that would not come back from JSON as it was given:
 *
 * - `undefined` (at the top or in an array, where JSON writes `null`),
 *   functions, symbols, `BigInt`, `NaN` and `±Infinity`;
 * - sparse arrays and arrays with extra properties;
 * - `Map`, `Set`, typed arrays, `Buffer`s, `ArrayBuffer`s, boxed primitives,
 *   `Date`s (they would come back as strings: pass `date.toISOString()`),
 *   and any other object whose prototype is not `Object.prototype`, `null`
 *   or `Array.prototype`;
 * - objects with a `toJSON` method, symbol keys or non-enumerable properties;
 * - strings and keys PostgreSQL `jsonb` cannot store (NUL, lone surrogates);
 * - cycles, and nesting deeper than {@link MAX_PAYLOAD_DEPTH}.
 *
 * Two things JSON does are accepted as documented, not refused: an object
 * property whose value is `undefined` is left out (it reads back as absent),
 * and `-0` is stored as `0`.
 *
 * @example
 * ```ts
 * assertJsonValue({ tags: ["a"] });                  // fine
 * assertJsonValue({ tags: new Set(["a"]) });          // throws PayloadError: payload.tags: a Set cannot be stored as JSON; convert it to an array
 * ```
 */
export function assertJsonValue(value: unknown, path = "payload"): void {
  if (isFlatStorableObject(value)) return;
  new JsonValueCheck(path).check(value, 0);
}

/**
 * Whether `value` is a plain object whose keys and values JSON and `jsonb`
 * keep exactly: finite numbers, booleans, `null`, `undefined` (left out),
 * storable strings. The common payload (`{ invoiceId: 812 }`) is accepted
 * by this one loop; anything else, fine or not, goes to the full walk,
 * which alone words refusals. It never accepts what the walk refuses.
 */
function isFlatStorableObject(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  const keys = plainObjectKeys(value);
  if (keys === undefined) return false;
  for (const key of keys) {
    const item = (value as Readonly<Record<string, unknown>>)[key];
    // JSON leaves an undefined property out, key and all, as the walk does.
    if (item !== undefined && (!isFlatStorableItem(item) || unstorableText(key) !== undefined)) return false;
  }
  return true;
}

function isFlatStorableItem(item: unknown): boolean {
  switch (typeof item) {
    case "number":
      return Number.isFinite(item);
    case "boolean":
    case "undefined":
      return true;
    case "string":
      return unstorableText(item) === undefined;
    case "object":
      return item === null;
    default:
      return false;
  }
}

/**
 * One walk over a value. The path of the value being looked at is kept as a
 * stack of keys and spelled out only for a refusal: building it for every
 * value cost more than the checks themselves on a small payload.
 */
class JsonValueCheck {
  readonly #root: string;
  readonly #keys: (string | number)[] = [];
  readonly #ancestors = new Set<object>();

  constructor(root: string) {
    this.#root = root;
  }

  check(value: unknown, depth: number): void {
    if (typeof value === "string") {
      const text = unstorableText(value);
      if (text !== undefined) throw this.#refusal(text, "cannot be stored");
      return;
    }
    const problem = primitiveProblem(value);
    if (problem !== undefined) throw this.#refusal(problem);
    if (typeof value !== "object" || value === null) return;
    if (this.#ancestors.has(value)) throw this.#refusal("is a circular reference, which JSON cannot carry");
    if (depth >= MAX_PAYLOAD_DEPTH) {
      throw this.#refusal(`is nested more than ${MAX_PAYLOAD_DEPTH} levels deep, the limit for payloads (MAX_PAYLOAD_DEPTH)`);
    }
    const keys = plainObjectKeys(value);
    const shape = keys === undefined ? objectProblem(value) : undefined;
    if (shape !== undefined) throw this.#refusal(shape);
    this.#ancestors.add(value);
    if (keys !== undefined) this.#checkProperties(value as Readonly<Record<string, unknown>>, keys, depth);
    else if (Array.isArray(value)) this.#checkItems(value, depth);
    else this.#checkProperties(value as Readonly<Record<string, unknown>>, Object.keys(value), depth);
    this.#ancestors.delete(value);
  }

  #checkItems(items: readonly unknown[], depth: number): void {
    for (let index = 0; index < items.length; index += 1) {
      const item = items[index];
      this.#keys.push(index);
      if (item === undefined) throw this.#refusal("is undefined, which JSON would store as null in an array");
      this.check(item, depth + 1);
      this.#keys.pop();
    }
  }

  #checkProperties(object: Readonly<Record<string, unknown>>, keys: readonly string[], depth: number): void {
    for (const key of keys) {
      const item = object[key];
      if (item === undefined) continue;
      const keyProblem = unstorableText(key);
      if (keyProblem !== undefined) throw this.#refusal(keyProblem, "cannot be stored", `a key of ${this.#path()}`);
      this.#keys.push(key);
      this.check(item, depth + 1);
      this.#keys.pop();
    }
  }

  /** `payload.items[3]["a key"]`: the path of the value being looked at. */
  #path(): string {
    let path = this.#root;
    for (const key of this.#keys) path = typeof key === "number" ? `${path}[${key}]` : childPath(path, key);
    return path;
  }

  #refusal(problem: string, what?: string, path = this.#path()): PayloadError {
    return refusal(path, problem, what);
  }
}

/**
 * The keys of a plain object (prototype `Object.prototype` or `null`) that
 * JSON would write as they are, or `undefined` for anything else, which
 * {@link objectProblem} then looks at: the common case costs two key lists.
 */
function plainObjectKeys(value: object): string[] | undefined {
  const prototype: unknown = Object.getPrototypeOf(value);
  if ((prototype !== Object.prototype && prototype !== null) || ArrayBuffer.isView(value)) return undefined;
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return undefined;
  const keys = Object.keys(value);
  return Reflect.ownKeys(value).length === keys.length ? keys : undefined;
}

/** Why a non-object value cannot be stored, or `undefined` when it can (or is an object). */
function primitiveProblem(value: unknown): string | undefined {
  switch (typeof value) {
    case "number":
      return Number.isFinite(value) ? undefined : `is ${value}, which JSON would store as null`;
    case "undefined":
      return "is undefined, which JSON cannot carry";
    case "bigint":
      return "is a bigint, which JSON cannot carry; pass it as a string";
    case "function":
    case "symbol":
      return `is a ${typeof value}, which JSON cannot carry`;
    default:
      return undefined;
  }
}

const TYPE_ADVICE: ReadonlyArray<readonly [(value: object) => boolean, (value: object) => string]> = [
  [(value) => value instanceof Map, () => "a Map cannot be stored as JSON; convert it to an object (Object.fromEntries) or an array of entries"],
  [(value) => value instanceof Set, () => "a Set cannot be stored as JSON; convert it to an array"],
  [(value) => value instanceof Date, () => "a Date would come back as a string; pass date.toISOString() instead"],
  [
    (value) => ArrayBuffer.isView(value) || value instanceof ArrayBuffer || value instanceof SharedArrayBuffer,
    (value) => `a ${constructorName(value)} (binary data) cannot be stored as JSON; encode it, e.g. as base64 text`,
  ],
  [
    (value) => value instanceof Number || value instanceof String || value instanceof Boolean,
    (value) => `a boxed ${constructorName(value)} would come back as a primitive; pass the primitive value`,
  ],
];

/** Why an object (or array) would not round-trip through JSON, or `undefined` when it would. */
function objectProblem(value: object): string | undefined {
  for (const [matches, advice] of TYPE_ADVICE) if (matches(value)) return advice(value);
  const prototype: unknown = Object.getPrototypeOf(value);
  if (Array.isArray(value)) {
    if (prototype !== Array.prototype) return `an array of class ${constructorName(value)} would come back as a plain array`;
    const keys = Reflect.ownKeys(value).length - 1; // `length` is an own key of every array
    if (Object.keys(value).length < value.length) return "is a sparse array; JSON would fill its holes with null";
    if (keys !== value.length) return "is an array with non-index properties, which JSON would drop";
    return undefined;
  }
  if (prototype !== Object.prototype && prototype !== null) {
    return `a ${constructorName(value)} instance cannot be stored as JSON faithfully; pass a plain object`;
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return "has a toJSON method; JSON would store what it returns, not the object";
  if (Reflect.ownKeys(value).length !== Object.keys(value).length) {
    return "has symbol keys or non-enumerable properties, which JSON would drop";
  }
  return undefined;
}

function constructorName(value: object): string {
  const name: unknown = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === "string" && name !== "" ? name : "class";
}

/** `payload.items`, or `payload["a key"]` for a key that is not an identifier. */
export function childPath(path: string, key: string): string {
  if (/^[A-Za-z_$][\w$]*$/.test(key)) return `${path}.${key}`;
  const shown = key.length > 40 ? `${key.slice(0, 40)}…` : key;
  return `${path}[${JSON.stringify(shown)}]`;
}

function refusal(path: string, problem: string, what = "is not JSON-serialisable"): PayloadError {
  // Advice that names the type reads "path: a Set cannot…"; the others read "payload …: path is …" (or "meta …").
  const root = /^[A-Za-z]+/.exec(path)?.[0] ?? "payload";
  const message = /^(?:is |has |must )/.test(problem) ? `${root} ${what}: ${path} ${problem}` : `${path}: ${problem}`;
  return new PayloadError(message, { path });
}
