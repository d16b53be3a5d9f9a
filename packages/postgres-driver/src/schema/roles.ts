import { ConfigError } from "@stint/core";
import { assertSqlIdentifier, rejectUnknownOptions } from "@stint/core/driver";
import { DEFAULT_SCHEMA } from "./default-schema";

/** The two roles of {@link rolesSql}. */
export interface StintRoles {
  /** Owns the schema and runs `stint migrate`. Default `stint_migrator`. */
  readonly migrator?: string;
  /** Runs workers, producers and the CLI's everyday commands: rows only, no DDL. Default `stint_runtime`. */
  readonly runtime?: string;
}

/** The role names {@link rolesSql} uses when none are given. */
export const DEFAULT_ROLES = Object.freeze({ migrator: "stint_migrator", runtime: "stint_runtime" });

/**
 * SQL that sets up least-privilege roles for one stint schema, to be run by
 * a superuser (or a role with `CREATEROLE` that owns the database) in the
 * database stint uses. Idempotent: running it again, before or after
 * `migrate`, changes nothing that is already right.
 *
 * - the **migrator** role (`LOGIN`, nothing more) owns the schema and every
 *   table and function in it: it runs `stint migrate` / `migrate()` and can
 *   create, alter and drop stint's objects — and nothing outside the schema
 *   (it gets no `CREATE` on the database);
 * - the **runtime** role (`LOGIN`, nothing more) gets `USAGE` on the schema,
 *   `SELECT, INSERT, UPDATE, DELETE` on its tables, `USAGE` on its
 *   sequences and `EXECUTE` on its functions — now, and through default
 *   privileges on whatever later migrations create. It has no `CREATE` on
 *   the schema and owns nothing, so `CREATE TABLE`, `ALTER TABLE` and
 *   `DROP TABLE` fail with SQLSTATE 42501 (insufficient_privilege). Workers,
 *   producers, schedules, `LISTEN` wake-ups and the leader lock need nothing more.
 *
 * The roles get no password here (so none ends up in a script or a shell
 * history); set one with `ALTER ROLE … PASSWORD` or psql's `\password`.
 * Names are validated as plain identifiers before anything is built.
 *
 * ### SQL (for `rolesSql("stint")`, abridged)
 * ```sql
 * DO $$ BEGIN CREATE ROLE "stint_migrator" LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;
 * DO $$ BEGIN CREATE ROLE "stint_runtime" LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;
 * CREATE SCHEMA IF NOT EXISTS "stint" AUTHORIZATION "stint_migrator";
 * ALTER SCHEMA "stint" OWNER TO "stint_migrator";
 * GRANT USAGE ON SCHEMA "stint" TO "stint_runtime";
 * GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "stint" TO "stint_runtime";
 * ALTER DEFAULT PRIVILEGES FOR ROLE "stint_migrator" IN SCHEMA "stint"
 *   GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO "stint_runtime";
 * ```
 *
 * @example
 * ```ts
 * process.stdout.write(rolesSql("stint", { migrator: "billing_migrator", runtime: "billing_worker" }));
 * // then: psql "$ADMIN_URL" -f roles.sql; stint migrate as billing_migrator; run workers as billing_worker
 * ```
 */
export function rolesSql(schema: string = DEFAULT_SCHEMA, roles: StintRoles = {}): string {
  const s = quote(assertSqlIdentifier(schema, "schema"));
  if (typeof roles !== "object" || roles === null) throw new ConfigError("roles", "must be an object with `migrator` and `runtime`");
  rejectUnknownOptions("roles", roles, ["migrator", "runtime"]);
  const migratorName = assertSqlIdentifier(roles.migrator ?? DEFAULT_ROLES.migrator, "migrator role");
  const runtimeName = assertSqlIdentifier(roles.runtime ?? DEFAULT_ROLES.runtime, "runtime role");
  if (migratorName === runtimeName) throw new ConfigError("roles", "the migrator and runtime roles must be two different roles");
  const migrator = quote(migratorName);
  const runtime = quote(runtimeName);
  return `-- stint roles for schema ${s}: ${migrator} owns the schema and runs migrations;
-- ${runtime} runs workers and producers and may read and write rows, nothing more.
-- Run as a superuser (or a CREATEROLE role that owns this database) in the database stint uses.
-- Idempotent. Set the passwords afterwards, e.g. ALTER ROLE ${migrator} PASSWORD '…';

-- 1. Two login roles with no other attributes (no SUPERUSER, CREATEDB, CREATEROLE, BYPASSRLS).
DO $$ BEGIN CREATE ROLE ${migrator} LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;
DO $$ BEGIN CREATE ROLE ${runtime} LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;
DO $$ BEGIN
  EXECUTE format('GRANT CONNECT ON DATABASE %I TO ${migrator}, ${runtime}', current_database());
END $$;

-- 2. The migrator owns the schema and everything already in it (if it was migrated by another role).
CREATE SCHEMA IF NOT EXISTS ${s} AUTHORIZATION ${migrator};
ALTER SCHEMA ${s} OWNER TO ${migrator};
DO $$
DECLARE
  object record;
BEGIN
  FOR object IN
    SELECT c.oid::regclass AS name FROM pg_class c
     WHERE c.relnamespace = '${s}'::regnamespace AND c.relkind IN ('r', 'p', 'v')
       AND c.relowner <> '${migrator}'::regrole
  LOOP
    EXECUTE format('ALTER TABLE %s OWNER TO ${migrator}', object.name);
  END LOOP;
  FOR object IN
    SELECT p.oid::regprocedure AS name FROM pg_proc p
     WHERE p.pronamespace = '${s}'::regnamespace AND p.proowner <> '${migrator}'::regrole
  LOOP
    EXECUTE format('ALTER ROUTINE %s OWNER TO ${migrator}', object.name);
  END LOOP;
END $$;

-- 3. The runtime role: use the schema, read and write rows, call stint's functions. No CREATE, owns nothing.
REVOKE ALL ON SCHEMA ${s} FROM PUBLIC;
GRANT USAGE ON SCHEMA ${s} TO ${runtime};
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${s} TO ${runtime};
GRANT USAGE ON ALL SEQUENCES IN SCHEMA ${s} TO ${runtime};
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ${s} TO ${runtime};

-- 4. The same grants on what later migrations create.
ALTER DEFAULT PRIVILEGES FOR ROLE ${migrator} IN SCHEMA ${s}
  GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ${runtime};
ALTER DEFAULT PRIVILEGES FOR ROLE ${migrator} IN SCHEMA ${s}
  GRANT USAGE ON SEQUENCES TO ${runtime};
ALTER DEFAULT PRIVILEGES FOR ROLE ${migrator} IN SCHEMA ${s}
  GRANT EXECUTE ON FUNCTIONS TO ${runtime};
`;
}

/** `"name"` — only ever called with a name that passed `assertSqlIdentifier`. */
function quote(identifier: string): string {
  return `"${identifier}"`;
}
