import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { PGlite } from '@electric-sql/pglite';
import { pgcrypto } from '@electric-sql/pglite/contrib/pgcrypto';
import { ConflictError } from '@osc/errors';
import { extractTarGz } from './untar';

/** The in-memory data directory of PGlite (nothing is written to disk). */
export const PGLITE_MEMORY = 'memory://';

const extensions = { pgcrypto };

/**
 * PostgreSQL's settings for PGlite on top of PGlite's own. initdb writes `shared_buffers = 128MB`,
 * and PGlite's WASM allocator zeroes the whole buffer pool at start, so it was 128 MB of resident
 * memory whether or not the data ever filled it (issue #17: embedded idle RSS 510 MB). 16 MB holds
 * the hot pages of an embedded product; the rest of the data is read through the OS page cache.
 */
export const PGLITE_SETTINGS: Readonly<Record<string, string>> = { shared_buffers: '16MB' };

const startParams = (): string[] => [
  ...PGlite.defaultStartParams,
  ...Object.entries(PGLITE_SETTINGS).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
];

let template: Promise<Blob> | undefined;

/**
 * Opens (creating when needed) a PGlite database in `dataDir` (`memory://` for a throw-away one).
 *
 * Running initdb inside WASM takes seconds (STACK.md trap 5), so a fresh directory is seeded from
 * a dump of a freshly initialised cluster instead: made once, cached in the OS temp directory
 * (keyed by the PGlite build) and in this process. The dump already has pgcrypto created.
 */
export async function openPglite(dataDir: string): Promise<PGlite> {
  const inMemory = dataDir.startsWith(PGLITE_MEMORY);
  const fresh = inMemory || !existsSync(join(dataDir, 'PG_VERSION'));
  if (!inMemory) mkdirSync(dataDir, { recursive: true });
  const unlock = inMemory ? () => undefined : lockDataDir(dataDir);
  try {
    const seeded = fresh && !inMemory && (await seedFromTemplateFile(dataDir));
    const loadDataDir = fresh && !seeded ? await freshClusterDump() : undefined;
    const pglite = await PGlite.create({
      dataDir,
      extensions,
      startParams: startParams(),
      ...(loadDataDir ? { loadDataDir } : {}),
    });
    unlockers.set(pglite, unlock);
    return pglite;
  } catch (err) {
    unlock();
    throw err;
  }
}

/** Closes a PGlite opened by {@link openPglite} and gives its data folder back. */
export async function closePglite(pglite: PGlite): Promise<void> {
  try {
    await pglite.close();
  } finally {
    unlockers.get(pglite)?.();
    unlockers.delete(pglite);
  }
}

const unlockers = new WeakMap<PGlite, () => void>();
const openDirs = new Set<string>();
const LOCK_FILE = 'osc.lock';

/**
 * PGlite has no postmaster to stop a second writer: two instances on one folder corrupt it. One
 * instance per folder per process (share the data source), and a pid lock file against a second
 * process; a lock left by a dead process is taken over.
 */
function lockDataDir(dataDir: string): () => void {
  const key = resolve(dataDir);
  if (openDirs.has(key)) {
    throw new ConflictError(
      `The data folder ${dataDir} is already open in this process; share its data source`,
    );
  }
  const file = join(key, LOCK_FILE);
  if (existsSync(file)) {
    const pid = Number(readFileSync(file, 'utf8').trim());
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
      throw new ConflictError(`The data folder ${dataDir} is in use by process ${pid}`);
    }
  }
  writeFileSync(file, String(process.pid));
  openDirs.add(key);
  return () => {
    if (!openDirs.delete(key)) return;
    rmSync(file, { force: true });
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Writes the cached fresh cluster into an empty on-disk `dataDir` straight from the template file,
 * streaming, so a first start holds no copy of the 40 MB cluster in memory (issue #17: through
 * `loadDataDir` it was three, which the idle process kept). PG_VERSION, which marks the folder as
 * a cluster, is written last. False when there is no template file yet, or it is unreadable (then
 * what was written is removed and the caller seeds through PGlite).
 */
async function seedFromTemplateFile(dataDir: string): Promise<boolean> {
  const file = templateCacheFile();
  if (!existsSync(file)) return false;
  const staging = join(dataDir, `.seed-${process.pid}`);
  const moved: string[] = [];
  try {
    const names = await extractTarGz(file, staging);
    const top = [...new Set(names.map((n) => n.split(/[/\\]/)[0] ?? n))];
    if (!top.includes('PG_VERSION')) throw new Error(`${file} holds no PG_VERSION`);
    for (const name of top.filter((n) => n !== 'PG_VERSION')) {
      renameSync(join(staging, name), join(dataDir, name));
      moved.push(name);
    }
    renameSync(join(staging, 'PG_VERSION'), join(dataDir, 'PG_VERSION'));
    return true;
  } catch {
    for (const name of moved) rmSync(join(dataDir, name), { recursive: true, force: true });
    return false;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** A tarball of a freshly initialised PGlite cluster with pgcrypto installed. */
export function freshClusterDump(): Promise<Blob> {
  template ??= loadOrBuildTemplate().catch((err: unknown) => {
    template = undefined;
    throw err;
  });
  return template;
}

async function loadOrBuildTemplate(): Promise<Blob> {
  const file = templateCacheFile();
  if (existsSync(file)) {
    try {
      return new Blob([gunzipSync(readFileSync(file))]);
    } catch {
      // A torn or foreign file: rebuild it below.
    }
  }
  const db = await PGlite.create({ dataDir: PGLITE_MEMORY, extensions, startParams: startParams() });
  try {
    await db.exec('CREATE EXTENSION IF NOT EXISTS pgcrypto');
    const dump = await db.dumpDataDir('none');
    const tar = Buffer.from(await dump.arrayBuffer());
    try {
      // Write then rename: parallel test workers may race to build the same template.
      const partial = `${file}.${process.pid}.${Date.now()}.partial`;
      writeFileSync(partial, gzipSync(tar, { level: 1 }));
      renameSync(partial, file);
    } catch {
      // The cache is an optimisation; an unwritable temp directory only costs time.
    }
    return new Blob([tar]);
  } finally {
    await db.close();
  }
}

function templateCacheFile(): string {
  const build = statSync(require.resolve('@electric-sql/pglite'));
  const key = `${build.size}-${Math.trunc(build.mtimeMs)}`;
  return join(tmpdir(), `osc-pglite-template-${key}.tar.gz`);
}
