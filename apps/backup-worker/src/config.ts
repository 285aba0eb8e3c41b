import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { BackupConfig } from './backups/backup.config';
import type { VolumeBackendConfig } from './volume-backend/volume-backend.config';
import { type Env, distributedInfraSchema, logLevelSchema, parseConfig, portSchema } from '@osc/http-common';

const schema = z.object({
  /** Port of /healthz, /readyz and /metrics when this app runs on its own. */
  BACKUP_WORKER_HEALTH_PORT: portSchema.default(9104),
  BACKUP_WORKER_HEALTH_HOST: z.string().default('0.0.0.0'),
  LOG_LEVEL: logLevelSchema,
  /** Directory of the default volume back end (sparse files); default `<DATA_DIR>/volumes`. */
  VOLUME_BACKEND_DIR: z.string().min(1).optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  /** Host part of this back end's name (`host@backend#pool`). */
  VOLUME_BACKEND_HOST: z.string().regex(/^[A-Za-z0-9._-]{1,100}$/).default(os.hostname().replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 100) || 'localhost'),
  VOLUME_BACKEND_NAME: z.string().regex(/^[A-Za-z0-9._-]{1,100}$/).default('file'),
  /**
   * Several back ends served by this process (Cinder's `enabled_backends`), comma-separated names;
   * replaces VOLUME_BACKEND_NAME. The first keeps VOLUME_BACKEND_DIR, each other one gets the
   * sibling directory `<VOLUME_BACKEND_DIR>-<name>`.
   */
  VOLUME_BACKENDS: z
    .string()
    .transform((s) => s.split(',').map((n) => n.trim()).filter((n) => n !== ''))
    .pipe(
      z
        .array(z.string().regex(/^[A-Za-z0-9._-]{1,100}$/, 'back-end names use letters, digits, dot, underscore and dash'))
        .min(1)
        .max(16)
        .refine((names) => new Set(names).size === names.length, 'back-end names must be unique'),
    )
    .optional(),
  VOLUME_BACKEND_AVAILABILITY_ZONE: z.string().min(1).max(255).default('nova'),
  VOLUME_BACKEND_MAX_OVER_SUBSCRIPTION_RATIO: z.coerce.number().min(0).default(20),
  VOLUME_BACKEND_RESERVED_PERCENTAGE: z.coerce.number().int().min(0).max(100).default(0),
  VOLUME_BACKEND_STATS_SECONDS: z.coerce.number().int().min(1).default(60),
  VOLUME_BACKEND_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(8),
  /** Root of the posix backup store; default `<DATA_DIR>/backups`. */
  BACKUP_STORE_DIR: z.string().min(1).optional(),
  /** Bytes per backup object (a multiple of the hash block size, BS-11.2). */
  BACKUP_CHUNK_SIZE: z.coerce.number().int().min(4096).max(1024 * 1024 * 1024).default(32 * 1024 * 1024),
  BACKUP_HASH_BLOCK_SIZE: z.coerce.number().int().min(512).max(64 * 1024 * 1024).default(32 * 1024),
  /** zlib (gzip), zstd, none (off, no); bz2 is refused by this worker. Restore reads all three. */
  BACKUP_COMPRESSION: z.enum(['zlib', 'gzip', 'zstd', 'none', 'off', 'no']).default('zlib'),
  BACKUP_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  /**
   * Chunks (backup) or objects (restore) in flight per job: read, hashed, compressed or written at
   * once. A job holds at most about twice this many chunks in memory.
   */
  BACKUP_PIPELINE_DEPTH: z.coerce.number().int().min(1).max(32).default(3),
});

export interface BackupWorkerConfig {
  readonly health: { port: number; host: string };
  readonly logLevel: string;
  readonly volumeBackend: VolumeBackendConfig;
  readonly backup: BackupConfig;
}

/** The configuration of this process's first (or only) back end. */
export function loadConfig(env: Env): BackupWorkerConfig {
  return loadConfigs(env)[0] as BackupWorkerConfig;
}

/** One configuration per back end this process serves (VOLUME_BACKENDS, else VOLUME_BACKEND_NAME). */
export function loadConfigs(env: Env): BackupWorkerConfig[] {
  const c = parseConfig('backup-worker', schema, env);
  const base = path.resolve(c.VOLUME_BACKEND_DIR ?? path.join(c.DATA_DIR, 'volumes'));
  const names = c.VOLUME_BACKENDS ?? [c.VOLUME_BACKEND_NAME];
  return names.map((name, i) => configFor(c, name, i === 0 ? base : `${base}-${name}`));
}

function configFor(c: z.infer<typeof schema>, backendName: string, directory: string): BackupWorkerConfig {
  return Object.freeze({
    health: { port: c.BACKUP_WORKER_HEALTH_PORT, host: c.BACKUP_WORKER_HEALTH_HOST },
    logLevel: c.LOG_LEVEL,
    volumeBackend: Object.freeze({
      directory,
      host: c.VOLUME_BACKEND_HOST,
      backendName,
      availabilityZone: c.VOLUME_BACKEND_AVAILABILITY_ZONE,
      maxOverSubscriptionRatio: c.VOLUME_BACKEND_MAX_OVER_SUBSCRIPTION_RATIO,
      reservedPercentage: c.VOLUME_BACKEND_RESERVED_PERCENTAGE,
      statsIntervalSeconds: c.VOLUME_BACKEND_STATS_SECONDS,
      concurrency: c.VOLUME_BACKEND_CONCURRENCY,
    }),
    backup: Object.freeze({
      directory: path.resolve(c.BACKUP_STORE_DIR ?? path.join(c.DATA_DIR, 'backups')),
      chunkSize: c.BACKUP_CHUNK_SIZE,
      blockSize: c.BACKUP_HASH_BLOCK_SIZE,
      compression: c.BACKUP_COMPRESSION,
      concurrency: c.BACKUP_CONCURRENCY,
      pipelineDepth: c.BACKUP_PIPELINE_DEPTH,
    }),
  });
}

export const loadInfraConfig = (env: Env) => parseConfig('backup-worker', distributedInfraSchema, env);
