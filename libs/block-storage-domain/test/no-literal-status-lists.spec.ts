import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The operation tables in src/state/operations.ts are the single truth for status changes: no app
 * or persistence source passes a literal status list (`['available', …]`) as the sources of a
 * compare-and-set (volumes, snapshots, backups, groups, group snapshots), nor a literal
 * migration_status list to `compareAndSetMigration` (`MIGRATION_OPERATIONS` holds those).
 * Receivers are the repository fields the services use.
 */
const ROOT = join(__dirname, '..', '..', '..');
const RECEIVERS = ['volumes', 'snapshots', 'backups', 'groups', 'groupSnapshots'];
const CALLS = ['compareAndSetStatus', 'compareAndSetMigration', 'transition', 'transitionMigration'];
/** Which arguments of a call are status lists (0-based): the sources, and a migration's migration_status sources. */
const LIST_ARGUMENTS: Readonly<Record<string, readonly number[]>> = { compareAndSetMigration: [2, 3] };
/**
 * Files not yet moved to MIGRATION_OPERATIONS, owned by issue #20 item 4 (the backup-worker
 * split): their literal migration_status lists are listed here until then, and the test below
 * fails once a file no longer needs its entry, so the list can only shrink.
 */
const PENDING_MIGRATION_LISTS = ['apps/backup-worker/src/volume-backend/volume-migration.ts'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.spec.ts') ? [path] : [];
  });
}

/** The top-level comma-separated arguments of the call whose `(` is at `open`. */
function argumentsAt(text: string, open: number): string[] {
  const args: string[] = [];
  let depth = 0;
  let start = open + 1;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      depth--;
      if (depth === 0) {
        args.push(text.slice(start, i).trim());
        return args;
      }
    } else if (c === ',' && depth === 1) {
      args.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  return args;
}

/** `file:line call` for every compare-and-set whose status sources (third argument) is a literal list. */
export function literalStatusLists(files: readonly string[]): string[] {
  const found: string[] = [];
  const call = new RegExp(`\\.(${RECEIVERS.join('|')})\\.(${CALLS.join('|')})\\(`, 'g');
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(call)) {
      const args = argumentsAt(text, m.index + m[0].length - 1);
      const lists = (LIST_ARGUMENTS[m[2] ?? ''] ?? [2]).map((i) => args[i] ?? '');
      if (lists.some((list) => /^\[[^\]]*['"`]/.test(list)))
        found.push(`${relative(ROOT, file)}:${text.slice(0, m.index).split('\n').length} ${m[1]}.${m[2]}`);
    }
  }
  return found;
}

function appAndPersistenceSources(): string[] {
  const apps = readdirSync(join(ROOT, 'apps')).flatMap((app) => {
    const src = join(ROOT, 'apps', app, 'src');
    return statSync(src, { throwIfNoEntry: false })?.isDirectory() ? sourceFiles(src) : [];
  });
  return [...apps, ...sourceFiles(join(ROOT, 'libs', 'block-storage-persistence', 'src'))];
}

const isPending = (hit: string): boolean =>
  PENDING_MIGRATION_LISTS.some(
    (file) => hit.startsWith(`${file}:`) && hit.endsWith('.compareAndSetMigration'),
  );

describe('compare-and-set call sites', () => {
  it('take their sources from the operation tables, never a literal status list', () => {
    const files = appAndPersistenceSources();
    expect(files.length).toBeGreaterThan(0);
    expect(literalStatusLists(files).filter((hit) => !isPending(hit))).toEqual([]);
  });

  it('still need every pending exemption (the list only shrinks)', () => {
    const hits = literalStatusLists(appAndPersistenceSources()).filter(isPending);
    for (const file of PENDING_MIGRATION_LISTS)
      expect([file, hits.some((hit) => hit.startsWith(`${file}:`))]).toEqual([file, true]);
  });

  it('would catch one (the check itself can fail)', () => {
    const probe = join(__dirname, 'fixtures', 'literal-status-list.ts.txt');
    expect(literalStatusLists([probe])).toEqual([
      expect.stringMatching(/literal-status-list\.ts\.txt:3 volumes\.compareAndSetStatus$/),
      expect.stringMatching(/literal-status-list\.ts\.txt:6 volumes\.compareAndSetMigration$/),
      expect.stringMatching(/literal-status-list\.ts\.txt:8 groups\.compareAndSetStatus$/),
    ]);
  });
});
