import { InternalError } from '@osc/errors';
import { type MigrationInterface } from 'typeorm';

/** A TypeORM migration class; its name (class name or `name`) ends with a 13-digit ms timestamp. */
export type MigrationClass = new () => MigrationInterface;

const TIMESTAMP = /(\d{13})$/;

/**
 * The convention: every lib or app that owns tables exports `export const <lib>Migrations = [...]`
 * of migration classes named `<Verb><What><13-digit epoch ms>` (e.g. `CreateWorkflowTables1732350000000`).
 * An app combines the lists it needs; the timestamp in the name decides the order across libs, so a
 * migration that depends on another lib's table must carry a later timestamp.
 *
 * Returns one list ordered by (timestamp, name). Throws on a name without a timestamp and on two
 * migrations with the same name (TypeORM records names, so the second would never run). Two libs
 * may pick the same timestamp independently: the name then decides, so the order never depends on
 * the order of the lists.
 */
export function combineMigrations(...lists: readonly (readonly MigrationClass[])[]): MigrationClass[] {
  const seen = new Map<string, MigrationClass>();
  const entries: { migration: MigrationClass; name: string; timestamp: number }[] = [];
  for (const migration of lists.flat()) {
    const name = migrationName(migration);
    const match = TIMESTAMP.exec(name);
    if (!match) {
      throw new InternalError(`Migration ${name} must end with a 13-digit JavaScript timestamp`);
    }
    const previous = seen.get(name);
    if (previous === migration) continue;
    if (previous) throw new InternalError(`Two different migrations are named ${name}`);
    const timestamp = Number(match[1]);
    seen.set(name, migration);
    entries.push({ migration, name, timestamp });
  }
  return entries
    .sort((a, b) => a.timestamp - b.timestamp || a.name.localeCompare(b.name))
    .map((e) => e.migration);
}

function migrationName(migration: MigrationClass): string {
  const declared = (new migration() as { name?: unknown }).name;
  return typeof declared === 'string' && declared ? declared : migration.name;
}
