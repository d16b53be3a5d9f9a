import { sql, type RawBuilder } from "kysely";
import { NOT_ASTRAL, shown } from "./enqueue-function-statement";

/** The pieces version 24 adds to the text of `enqueue(…)`, each in its place (see `enqueueFunctionStatement`). */
export interface GroupParts {
  /** After the window parameters: `group_key`, `serial_key`, `serial_on_dead`. */
  readonly parameters: RawBuilder<unknown>;
  /** Their checks, before `max_payload_bytes`' own. */
  readonly checks: RawBuilder<unknown>;
  /** The `group_key` and `serial` columns and their values, appended to each insert. */
  readonly column: RawBuilder<unknown>;
  readonly value: RawBuilder<unknown>;
}

/**
 * The parts of version 24's `enqueue(…)`: a job's group (`group_key`, as
 * `group`) or serial key (`serial_key` and `serial_on_dead`, as
 * `serialKey` and `serialOnDead`), checked as the library checks them,
 * each refusal naming its parameter (SQLSTATE 22023, `COLUMN`).
 *
 * @example
 * ```ts
 * enqueueFunctionStatement("stint", { events: true, windows: true, groups: true }); // uses groupParts()
 * ```
 */
export function groupParts(): GroupParts {
  return {
    parameters: sql`,
  group_key text DEFAULT NULL,
  serial_key text DEFAULT NULL,
  serial_on_dead text DEFAULT NULL`,
    checks: sql`${keyCheck("group_key")}${keyCheck("serial_key")}  IF enqueue.group_key IS NOT NULL AND enqueue.serial_key IS NOT NULL THEN
    RAISE EXCEPTION USING ERRCODE = '22023', COLUMN = 'serial_key',
      MESSAGE = 'serial_key takes no group_key beside it: a serial key takes its own turn among the queue''s groups';
  END IF;
  IF enqueue.serial_on_dead IS NOT NULL AND enqueue.serial_key IS NULL THEN
    RAISE EXCEPTION USING ERRCODE = '22023', COLUMN = 'serial_on_dead', MESSAGE = 'serial_on_dead needs a serial_key';
  END IF;
  IF enqueue.serial_on_dead NOT IN ('hold', 'release') THEN
    RAISE EXCEPTION USING ERRCODE = '22023', COLUMN = 'serial_on_dead',
      MESSAGE = format('serial_on_dead must be hold or release, got %s', to_json(enqueue.serial_on_dead));
  END IF;
`,
    column: sql`, group_key, serial`,
    value: sql`, coalesce(enqueue.group_key, enqueue.serial_key, ''), CASE WHEN enqueue.serial_key IS NOT NULL THEN coalesce(enqueue.serial_on_dead, 'hold') END`,
  };
}

/** The check that a key parameter is a non-empty text of at most 256 UTF-16 code units (the library's `MAX_GROUP_KEY_LENGTH`). */
function keyCheck(parameter: "group_key" | "serial_key"): RawBuilder<unknown> {
  const value = sql.raw(`enqueue.${parameter}`);
  return sql`  IF ${value} IS NOT NULL AND (${value} = '' OR
      char_length(${value}) > 128 AND char_length(${value}) + char_length(regexp_replace(${value}, ${sql.lit(NOT_ASTRAL)}, '', 'g')) > 256) THEN
    RAISE EXCEPTION USING ERRCODE = '22023', COLUMN = ${sql.lit(parameter)}, MESSAGE = format(
      ${sql.lit(`${parameter} must be a non-empty text of at most 256 characters (UTF-16 code units), got %s`)}, ${shown(value)});
  END IF;
`;
}
