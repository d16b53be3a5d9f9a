import { sql, type Kysely } from "kysely";

/**
 * Every schema, relation, function and type of the database as text
 * (`class:r public.accounts`), so that two snapshots show what a test
 * created. Left out: temporary schemas, and the schemas other test suites
 * create and drop meanwhile on a shared database (names ending in a
 * 12-hex-digit random suffix, like `stint_test_5f5916a5dfb0`) — except
 * `keep`, the suite's own schema, whose objects must not change either.
 * A TOAST table, and its index, count in their owner's schema.
 */
export async function catalogSnapshot(db: Kysely<any>, keep: string): Promise<Set<string>> {
  const { rows } = await sql<{ object: string }>`WITH spaces AS (
  SELECT oid, nspname FROM pg_catalog.pg_namespace
   WHERE nspname !~ '^pg_(toast_)?temp_[0-9]+$'
     AND (nspname !~ '_[0-9a-f]{12}$' OR nspname = ${keep})
),
relations AS (
  SELECT c.oid, c.relkind, c.relname, coalesce(owner.relnamespace, index_owner.relnamespace, c.relnamespace) AS space
    FROM pg_catalog.pg_class c
    LEFT JOIN pg_catalog.pg_class owner ON owner.reltoastrelid = c.oid
    LEFT JOIN pg_catalog.pg_index toast_index ON toast_index.indexrelid = c.oid AND c.relnamespace = 'pg_toast'::regnamespace
    LEFT JOIN pg_catalog.pg_class index_owner ON index_owner.reltoastrelid = toast_index.indrelid
)
SELECT 'schema ' || nspname::text AS object FROM spaces
UNION ALL
SELECT 'class:' || r.relkind::text || ' ' || s.nspname::text || '.' || r.relname::text FROM relations r JOIN spaces s ON s.oid = r.space
UNION ALL
SELECT 'function ' || s.nspname::text || '.' || p.proname::text || '(' || pg_catalog.pg_get_function_identity_arguments(p.oid) || ')'
  FROM pg_catalog.pg_proc p JOIN spaces s ON s.oid = p.pronamespace
UNION ALL
SELECT 'type ' || s.nspname::text || '.' || t.typname::text
  FROM pg_catalog.pg_type t JOIN spaces s ON s.oid = t.typnamespace
 WHERE NOT EXISTS (SELECT 1 FROM relations r WHERE r.oid = t.typrelid AND r.space <> t.typnamespace)`.execute(db);
  return new Set(rows.map((row) => row.object));
}

/** What `after` has that `before` lacks, and the reverse. */
export function catalogDifference(before: Set<string>, after: Set<string>): { readonly added: string[]; readonly removed: string[] } {
  return {
    added: [...after].filter((object) => !before.has(object)).sort(),
    removed: [...before].filter((object) => !after.has(object)).sort(),
  };
}
