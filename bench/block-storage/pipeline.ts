/**
 * Diagnostic, not a result (results go through the API: `backup.ts`): the backup worker's own
 * backup and restore functions (`writeBackup`, `restoreBackup`) on a local file, without HTTP, the
 * job queue or the database, with the CPU they used (every thread of this process). Used to tell the
 * pipeline's cost from the service's and to compare pipeline depths alternated on one machine.
 *
 * A volume file of `--gib` GiB (first half random bytes, second half a hole, as `backup.ts` seeds
 * it; with `--data compressible` the random bytes keep only their low four bits, so zstd halves
 * them) is written once; then, for each round and each depth of `--depths`, a full `zstd` backup into
 * a posix store and a restore of it into a new sparse file, the page cache dropped before each (as
 * root; otherwise the JSON says it was not). The restored file's sha256 must equal the source's.
 * `--checks md5,sha256` restores each backup once per check of the objects (`restoreBackup`'s
 * `check`); without it, once with the product's choice for this CPU (`fasterCheck`).
 *
 *   node -r @swc-node/register bench/block-storage/pipeline.ts [--gib 4] [--depths 3,4] [--rounds 3] [--data random|compressible] [--checks md5,sha256] [--results <file>]
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  fasterCheck,
  restoreBackup,
  type RestoreCheck,
} from '../../apps/backup-worker/src/backups/backup-reader';
import { writeBackup } from '../../apps/backup-worker/src/backups/backup-writer';
import { ChunkWorkers } from '../../apps/backup-worker/src/backups/chunk-workers';
import { PosixBackupStore } from '../../apps/backup-worker/src/backups/stores';
import { sha256File } from '../../apps/volume-api-e2e/test/backup-files';
import { dropCaches } from './page-cache';

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? (process.argv[i + 1] as string) : fallback;
};
const MIB = 1024 * 1024;
const GIB = 1024 * MIB;
const BYTES = Number(arg('gib', '4')) * GIB;
const DEPTHS = arg('depths', '3,4').split(',').map(Number);
const ROUNDS = Number(arg('rounds', '3'));
const COMPRESSIBLE = arg('data', 'random') === 'compressible';
const CHECKS = arg('checks', fasterCheck()).split(',') as RestoreCheck[];
for (const c of CHECKS) if (c !== 'md5' && c !== 'sha256') throw new Error(`--checks ${c}: md5 or sha256`);
const RESULTS = arg('results', path.join(__dirname, '../results/block-storage-pipeline.json'));

/** Wall seconds and CPU seconds (user, system) of `fn`, every thread of the process counted. */
async function timed(
  fn: () => Promise<unknown>,
): Promise<{ seconds: number; cpuUser: number; cpuSystem: number }> {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await fn();
  const c = process.cpuUsage(c0);
  const r = (x: number): number => Math.round(x * 1000) / 1000;
  return {
    seconds: r(Number(process.hrtime.bigint() - t0) / 1e9),
    cpuUser: r(c.user / 1e6),
    cpuSystem: r(c.system / 1e6),
  };
}

async function main(): Promise<void> {
  // on the filesystem the product keeps its data on (the working tree's), not a tmpfs
  mkdirSync(path.join(__dirname, '../../tmp'), { recursive: true });
  const dir = mkdtempSync(path.join(__dirname, '../../tmp/bench-pipeline-'));
  const runs: Record<string, unknown>[] = [];
  let cacheDropped = true;
  try {
    const source = path.join(dir, 'volume');
    const fh = await open(source, 'w');
    for (let p = 0; p < BYTES / 2; p += 64 * MIB) {
      const bytes = randomBytes(64 * MIB);
      if (COMPRESSIBLE) for (let i = 0; i < bytes.length; i++) bytes[i] = (bytes[i] as number) & 0x0f;
      await fh.write(bytes, 0, bytes.length, p);
    }
    await fh.truncate(BYTES);
    await fh.close();
    const sourceSha = await sha256File(source, 16 * MIB);
    for (let round = 1; round <= ROUNDS; round++) {
      for (const depth of DEPTHS) {
        const store = new PosixBackupStore(path.join(dir, 'store'));
        // as the backup worker sizes its pool (backup-restorer.ts)
        const workers = new ChunkWorkers(Math.max(1, Math.min(depth, os.availableParallelism())));
        const location = { container: 'c', prefix: `p${round}-${depth}` };
        const target = path.join(dir, 'target');
        try {
          cacheDropped = dropCaches() && cacheDropped;
          const backup = await timed(() =>
            writeBackup({
              store,
              workers,
              params: { chunkSize: 32 * MIB, blockSize: 32 * 1024 },
              codec: 'zstd',
              depth,
              source,
              bytes: BYTES,
              location,
              description: {
                backupId: location.prefix,
                volumeId: 'v',
                name: null,
                description: null,
                createdAt: new Date().toISOString(),
                parentId: null,
              },
              volumeMeta: '{}',
              parent: null,
              progress: async () => true,
            }),
          );
          const restores: Record<string, Awaited<ReturnType<typeof timed>>> = {};
          let sha256Equal = true;
          for (const check of CHECKS) {
            const th = await open(target, 'w');
            await th.truncate(BYTES);
            await th.close();
            cacheDropped = dropCaches() && cacheDropped;
            restores[check] = await timed(() =>
              restoreBackup({
                store,
                workers,
                depth,
                chain: [location],
                target,
                bytes: BYTES,
                newVolume: true,
                progress: async () => true,
                reportEvery: 32 * MIB,
                check,
              }),
            );
            sha256Equal = (await sha256File(target, 16 * MIB)) === sourceSha && sha256Equal;
            rmSync(target, { force: true });
          }
          // the process's peak resident memory so far (chunks, workers' outputs, buffers not yet reclaimed)
          const maxRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
          const run = { round, depth, backup, restores, sha256Equal, maxRssMb, load: os.loadavg()[0] };
          runs.push(run);
          process.stderr.write(`${JSON.stringify(run)}\n`);
          if (!sha256Equal) throw new Error('the restored file differs from the source');
        } finally {
          await workers.close();
          rmSync(path.join(dir, 'store'), { recursive: true, force: true });
          rmSync(target, { force: true });
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const result = {
    gib: BYTES / GIB,
    data: COMPRESSIBLE ? 'compressible' : 'random',
    codec: 'zstd',
    chunkMib: 32,
    cacheDropped,
    machine: `${os.cpus().length} cores`,
    fasterCheck: fasterCheck(),
    at: new Date().toISOString(),
    runs,
  };
  mkdirSync(path.dirname(RESULTS), { recursive: true });
  writeFileSync(RESULTS, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`written to ${RESULTS}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
