import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The operation tables in src/state/operations.ts are the single truth for status changes: no app
 * source passes a literal status list (`['available', …]`) as the sources of a compare-and-set on
 * the resources already moved to the tables. Receivers are the repository fields the services use.
 */
const ROOT = join(__dirname, '..', '..', '..');
const RECEIVERS = ['volumes', 'snapshots', 'backups'];
const CALLS = ['compareAndSetStatus', 'compareAndSetMigration', 'transition'];

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
      const sources = argumentsAt(text, m.index + m[0].length - 1)[2] ?? '';
      if (/^\[[^\]]*['"`]/.test(sources)) found.push(`${relative(ROOT, file)}:${text.slice(0, m.index).split('\n').length} ${m[1]}.${m[2]}`);
    }
  }
  return found;
}

describe('compare-and-set call sites', () => {
  it('take their sources from the operation tables, never a literal status list', () => {
    const files = readdirSync(join(ROOT, 'apps')).flatMap((app) => {
      const src = join(ROOT, 'apps', app, 'src');
      return statSync(src, { throwIfNoEntry: false })?.isDirectory() ? sourceFiles(src) : [];
    });
    expect(files.length).toBeGreaterThan(0);
    expect(literalStatusLists(files)).toEqual([]);
  });

  it('would catch one (the check itself can fail)', () => {
    const probe = join(__dirname, 'fixtures', 'literal-status-list.ts.txt');
    expect(literalStatusLists([probe])).toEqual([expect.stringMatching(/literal-status-list\.ts\.txt:3 volumes\.compareAndSetStatus$/)]);
  });
});
