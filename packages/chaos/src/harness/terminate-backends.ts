import { sql, type Kysely } from "kysely";

/** Which stint connections a termination hit, by role (`worker`, `listen`, `leader`, …), and how many were busy. */
export type TerminationsByRole = Record<string, number>;

/** The key of {@link TerminationsByRole} counting victims that were running a statement or inside a transaction. */
const BUSY = "busy";

/**
 * Terminates up to `count` stint connections of the current database
 * (`application_name` `stint` or `stint:<role>:…`), chosen at random, with
 * `pg_terminate_backend`: the server closes them as it would on a failover
 * or an idle timeout. Adds what it hit to `byRole`; resolves with how many
 * backends it terminated.
 */
export async function terminateStintBackends(db: Kysely<any>, count: number, random: () => number, byRole: TerminationsByRole): Promise<number> {
  const { rows } = await sql<{ pid: number; application_name: string; state: string | null }>`
    SELECT pid, application_name, state FROM pg_stat_activity
     WHERE datname = current_database() AND pid <> pg_backend_pid()
       AND (application_name = 'stint' OR application_name LIKE 'stint:%')`.execute(db);
  const victims = [...rows];
  let terminated = 0;
  for (let i = 0; i < count && victims.length > 0; i += 1) {
    const [victim] = victims.splice(Math.floor(random() * victims.length), 1);
    const { rows: done } = await sql<{ ok: boolean }>`SELECT pg_terminate_backend(${victim!.pid}::integer) AS ok`.execute(db);
    if (done[0]?.ok) {
      terminated += 1;
      const role = victim!.application_name.split(":")[1] ?? "stint";
      byRole[role] = (byRole[role] ?? 0) + 1;
      if (victim!.state !== "idle") byRole[BUSY] = (byRole[BUSY] ?? 0) + 1;
    }
  }
  return terminated;
}

/** `worker 12, listen 3, leader 1; 5 busy`. */
export function describeRoles(byRole: TerminationsByRole): string {
  const roles = Object.entries(byRole)
    .filter(([role]) => role !== BUSY)
    .sort(([, a], [, b]) => b - a)
    .map(([role, n]) => `${role} ${n}`)
    .join(", ");
  return `${roles}; ${byRole[BUSY] ?? 0} busy in a statement or transaction`;
}
