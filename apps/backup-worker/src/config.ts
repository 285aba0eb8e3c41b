import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { BackupConfig } from './backups/backup.config';
import type { BackupStoreConfig } from './backups/stores';
import type { VolumeBackendConfig, VolumeDataConfig } from './volume-backend/volume-backend.config';
import { type Env, distributedInfraSchema, logLevelSchema, parseConfig, portSchema } from '@osc/http-common';

/** BACKUP_PIPELINE_DEPTH when unset (see the schema). */
export const DEFAULT_PIPELINE_DEPTH = 4;

const httpUrl = z.string().refine((v) => {
  try {
    return ['http:', 'https:'].includes(new URL(v).protocol);
  } catch {
    return false;
  }
}, 'must be an http:// or https:// URL');

const schema = z.object({
  /** Port of /healthz, /readyz and /metrics when this app runs on its own. */
  BACKUP_WORKER_HEALTH_PORT: portSchema.default(9104),
  BACKUP_WORKER_HEALTH_HOST: z.string().default('0.0.0.0'),
  LOG_LEVEL: logLevelSchema,
  /** Directory of the default volume back end (sparse files); default `<DATA_DIR>/volumes`. */
  VOLUME_BACKEND_DIR: z.string().min(1).optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  /** Host part of this back end's name (`host@backend#pool`). */
  VOLUME_BACKEND_HOST: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,100}$/)
    .default(
      os
        .hostname()
        .replace(/[^A-Za-z0-9._-]/g, '-')
        .slice(0, 100) || 'localhost',
    ),
  VOLUME_BACKEND_NAME: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,100}$/)
    .default('file'),
  /**
   * Several back ends served by this process (Cinder's `enabled_backends`), comma-separated names;
   * replaces VOLUME_BACKEND_NAME. The first keeps VOLUME_BACKEND_DIR, each other one gets the
   * sibling directory `<VOLUME_BACKEND_DIR>-<name>`.
   */
  VOLUME_BACKENDS: z
    .string()
    .transform((s) =>
      s
        .split(',')
        .map((n) => n.trim())
        .filter((n) => n !== ''),
    )
    .pipe(
      z
        .array(
          z
            .string()
            .regex(/^[A-Za-z0-9._-]{1,100}$/, 'back-end names use letters, digits, dot, underscore and dash'),
        )
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
  /**
   * The machine named in the pool's `location_info` (default the hostname): back ends with the same
   * name read each other's files directly, others through the data endpoint below.
   */
  VOLUME_BACKEND_MACHINE: z
    .string()
    .regex(/^[^:\s]{1,255}$/, 'a machine name without ":" or spaces')
    .default(os.hostname()),
  /**
   * Port of the streaming data endpoint other back-end hosts read a migrating volume from (unset:
   * none, migrations between machines fail). With VOLUME_BACKENDS the n-th back end listens on port + n.
   */
  VOLUME_DATA_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  VOLUME_DATA_HOST: z.string().min(1).default('0.0.0.0'),
  /** Base URL other hosts reach that port at; default `http://<VOLUME_BACKEND_HOST>:<port>`. */
  VOLUME_DATA_URL: httpUrl.optional(),
  /** Secret the back ends share to sign data requests (required with VOLUME_DATA_PORT). */
  VOLUME_DATA_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  /** Seconds one migration's transfer may take. */
  VOLUME_DATA_TIMEOUT: z.coerce.number().int().min(1).max(86400).default(3600),
  /** Root of the posix backup store; default `<DATA_DIR>/backups`. */
  BACKUP_STORE_DIR: z.string().min(1).optional(),
  /** Where backups go (Cinder's backup_driver): posix (BACKUP_STORE_DIR), swift or s3. */
  BACKUP_DRIVER: z
    .string()
    .transform((s) => BACKUP_DRIVER_ALIASES[s.trim()] ?? s)
    .pipe(z.enum(['posix', 'swift', 's3'], { message: 'must be posix, swift or s3' }))
    .default('posix'),
  BACKUP_SWIFT_URL: httpUrl.optional(),
  BACKUP_SWIFT_AUTH_URL: httpUrl.optional(),
  /** 1 (TempAuth, `X-Auth-User`/`X-Auth-Key`) or 3 (Keystone v3 password); Cinder's 2 is not supported. */
  BACKUP_SWIFT_AUTH_VERSION: z
    .enum(['1', '3'], { message: 'must be 1 (TempAuth) or 3 (Keystone v3)' })
    .default('1'),
  BACKUP_SWIFT_USER: z.string().min(1).optional(),
  BACKUP_SWIFT_KEY: z.string().min(1).optional(),
  /** Keystone v3 project (Cinder's backup_swift_project, or backup_swift_tenant). */
  BACKUP_SWIFT_PROJECT: z.string().min(1).optional(),
  BACKUP_SWIFT_TENANT: z.string().min(1).optional(),
  BACKUP_SWIFT_USER_DOMAIN: z.string().min(1).default('Default'),
  BACKUP_SWIFT_PROJECT_DOMAIN: z.string().min(1).default('Default'),
  /** Keystone catalog interface and region of the object-store endpoint (ours). */
  BACKUP_SWIFT_ENDPOINT_INTERFACE: z.enum(['public', 'internal', 'admin']).default('public'),
  BACKUP_SWIFT_REGION: z.string().min(1).optional(),
  BACKUP_SWIFT_CONTAINER: z
    .string()
    .min(1)
    .max(256)
    .refine((s) => !s.includes('/'), 'a Swift container name has no "/"')
    .default('volumebackups'),
  /** Objects larger than this are stored as static large objects of segments this large (ours). */
  BACKUP_SWIFT_SEGMENT_SIZE: z.coerce
    .number()
    .int()
    .min(1024 * 1024)
    .max(5 * 1024 * 1024 * 1024)
    .default(1024 * 1024 * 1024),
  BACKUP_SWIFT_RETRY_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(3),
  /** Seconds before the first retry (then twice, three times that...). */
  BACKUP_SWIFT_RETRY_BACKOFF: z.coerce.number().min(0).max(300).default(2),
  /** Seconds one Swift request may take (ours). */
  BACKUP_SWIFT_TIMEOUT: z.coerce.number().min(1).max(3600).default(120),
  BACKUP_S3_ENDPOINT_URL: httpUrl.optional(),
  BACKUP_S3_STORE_ACCESS_KEY: z.string().min(1).optional(),
  BACKUP_S3_STORE_SECRET_KEY: z.string().min(1).optional(),
  BACKUP_S3_STORE_BUCKET: z
    .string()
    .regex(
      /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/,
      'an S3 bucket name: 3 to 63 lower-case letters, digits, dots and dashes',
    )
    .default('volumebackups'),
  /** Region signed into requests (ours; S3-compatible servers mostly ignore it). */
  BACKUP_S3_REGION: z.string().min(1).default('us-east-1'),
  /** Objects larger than this go up as multipart uploads of parts this large (ours; S3's minimum part is 5 MiB). */
  BACKUP_S3_PART_SIZE: z.coerce
    .number()
    .int()
    .min(5 * 1024 * 1024)
    .max(5 * 1024 * 1024 * 1024)
    .default(16 * 1024 * 1024),
  /** Seconds one S3 request may take. */
  BACKUP_S3_TIMEOUT: z.coerce.number().min(1).max(3600).default(60),
  BACKUP_S3_RETRY_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(4),
  BACKUP_S3_MD5_VALIDATION: z
    .enum(['true', 'false', 'True', 'False', '1', '0'])
    .transform((v) => v === 'true' || v === 'True' || v === '1')
    .default('true'),
  /** Bytes per backup object (a multiple of the hash block size, BS-11.2). */
  BACKUP_CHUNK_SIZE: z.coerce
    .number()
    .int()
    .min(4096)
    .max(1024 * 1024 * 1024)
    .default(32 * 1024 * 1024),
  BACKUP_HASH_BLOCK_SIZE: z.coerce
    .number()
    .int()
    .min(512)
    .max(64 * 1024 * 1024)
    .default(32 * 1024),
  /** zlib (gzip), zstd, none (off, no); bz2 is refused by this worker. Restore reads all three. */
  BACKUP_COMPRESSION: z.enum(['zlib', 'gzip', 'zstd', 'none', 'off', 'no']).default('zlib'),
  BACKUP_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  /**
   * Chunks (backup) or objects (restore) in flight per job: read, hashed, compressed or written at
   * once. A job holds at most about twice this many chunks in memory. 4 rather than 3: a 4 GiB
   * backup took ~12 % less time and CPU on two cores, a restore 3–13 % less time (alternated, through
   * the API and without it; docs/issue-17-history.md, "Issue 17, stop 42").
   */
  BACKUP_PIPELINE_DEPTH: z.coerce.number().int().min(1).max(32).default(DEFAULT_PIPELINE_DEPTH),
});

/** Cinder's driver module paths are accepted as BACKUP_DRIVER values too. */
const BACKUP_DRIVER_ALIASES: Readonly<Record<string, string>> = {
  'cinder.backup.drivers.posix.PosixBackupDriver': 'posix',
  'cinder.backup.drivers.posix': 'posix',
  'cinder.backup.drivers.swift.SwiftBackupDriver': 'swift',
  'cinder.backup.drivers.swift': 'swift',
  'cinder.backup.drivers.s3.S3BackupDriver': 's3',
  'cinder.backup.drivers.s3': 's3',
};

const fullSchema = schema.superRefine((c, ctx) => {
  const need = (keys: (keyof typeof c)[], why: string): void => {
    for (const k of keys)
      if (c[k] === undefined) ctx.addIssue({ code: 'custom', path: [k], message: `is required ${why}` });
  };
  if (c.BACKUP_DRIVER === 'swift') {
    need(['BACKUP_SWIFT_AUTH_URL', 'BACKUP_SWIFT_USER', 'BACKUP_SWIFT_KEY'], 'with BACKUP_DRIVER=swift');
    if (
      c.BACKUP_SWIFT_AUTH_VERSION === '3' &&
      c.BACKUP_SWIFT_PROJECT === undefined &&
      c.BACKUP_SWIFT_TENANT === undefined
    )
      ctx.addIssue({
        code: 'custom',
        path: ['BACKUP_SWIFT_PROJECT'],
        message: 'is required with BACKUP_SWIFT_AUTH_VERSION=3',
      });
  }
  if (c.VOLUME_DATA_PORT !== undefined) {
    need(['VOLUME_DATA_SECRET'], 'with VOLUME_DATA_PORT');
    if (c.VOLUME_DATA_PORT + (c.VOLUME_BACKENDS?.length ?? 1) - 1 > 65535)
      ctx.addIssue({
        code: 'custom',
        path: ['VOLUME_DATA_PORT'],
        message: 'plus one port per further back end passes 65535',
      });
  }
  if (c.BACKUP_DRIVER === 's3')
    need(['BACKUP_S3_STORE_ACCESS_KEY', 'BACKUP_S3_STORE_SECRET_KEY'], 'with BACKUP_DRIVER=s3');
});

type Settings = z.infer<typeof schema>;

function storeConfig(c: Settings): BackupStoreConfig {
  switch (c.BACKUP_DRIVER) {
    case 'posix':
      return {
        driver: 'posix',
        directory: path.resolve(c.BACKUP_STORE_DIR ?? path.join(c.DATA_DIR, 'backups')),
      };
    case 'swift':
      return {
        driver: 'swift',
        url: c.BACKUP_SWIFT_URL ?? null,
        authUrl: c.BACKUP_SWIFT_AUTH_URL as string,
        authVersion: c.BACKUP_SWIFT_AUTH_VERSION,
        user: c.BACKUP_SWIFT_USER as string,
        key: c.BACKUP_SWIFT_KEY as string,
        project: c.BACKUP_SWIFT_PROJECT ?? c.BACKUP_SWIFT_TENANT ?? null,
        userDomain: c.BACKUP_SWIFT_USER_DOMAIN,
        projectDomain: c.BACKUP_SWIFT_PROJECT_DOMAIN,
        endpointInterface: c.BACKUP_SWIFT_ENDPOINT_INTERFACE,
        region: c.BACKUP_SWIFT_REGION ?? null,
        container: c.BACKUP_SWIFT_CONTAINER,
        segmentSize: c.BACKUP_SWIFT_SEGMENT_SIZE,
        retryAttempts: c.BACKUP_SWIFT_RETRY_ATTEMPTS,
        retryBackoffMs: c.BACKUP_SWIFT_RETRY_BACKOFF * 1000,
        timeoutMs: c.BACKUP_SWIFT_TIMEOUT * 1000,
      };
    case 's3':
      return {
        driver: 's3',
        endpointUrl: c.BACKUP_S3_ENDPOINT_URL ?? null,
        accessKey: c.BACKUP_S3_STORE_ACCESS_KEY as string,
        secretKey: c.BACKUP_S3_STORE_SECRET_KEY as string,
        bucket: c.BACKUP_S3_STORE_BUCKET,
        region: c.BACKUP_S3_REGION,
        partSize: c.BACKUP_S3_PART_SIZE,
        timeoutMs: c.BACKUP_S3_TIMEOUT * 1000,
        retryMaxAttempts: c.BACKUP_S3_RETRY_MAX_ATTEMPTS,
        md5Validation: c.BACKUP_S3_MD5_VALIDATION,
      };
  }
}

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
  const c = parseConfig('backup-worker', fullSchema, env);
  const base = path.resolve(c.VOLUME_BACKEND_DIR ?? path.join(c.DATA_DIR, 'volumes'));
  const names = c.VOLUME_BACKENDS ?? [c.VOLUME_BACKEND_NAME];
  return names.map((name, i) => configFor(c, name, i === 0 ? base : `${base}-${name}`, i));
}

function dataConfig(c: Settings, index: number): VolumeDataConfig | null {
  if (c.VOLUME_DATA_PORT === undefined) return null;
  const port = c.VOLUME_DATA_PORT + index;
  let url = c.VOLUME_DATA_URL ?? `http://${c.VOLUME_BACKEND_HOST}:${port}`;
  if (c.VOLUME_DATA_URL !== undefined && index > 0) {
    const u = new URL(c.VOLUME_DATA_URL);
    u.port = String(Number(u.port || (u.protocol === 'https:' ? 443 : 80)) + index);
    url = u.toString();
  }
  return Object.freeze({
    host: c.VOLUME_DATA_HOST,
    port,
    url: url.replace(/\/+$/, ''),
    secret: c.VOLUME_DATA_SECRET as string,
    timeoutMs: c.VOLUME_DATA_TIMEOUT * 1000,
  });
}

function configFor(c: Settings, backendName: string, directory: string, index: number): BackupWorkerConfig {
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
      machine: c.VOLUME_BACKEND_MACHINE,
      data: dataConfig(c, index),
    }),
    backup: Object.freeze({
      store: Object.freeze(storeConfig(c)),
      chunkSize: c.BACKUP_CHUNK_SIZE,
      blockSize: c.BACKUP_HASH_BLOCK_SIZE,
      compression: c.BACKUP_COMPRESSION,
      concurrency: c.BACKUP_CONCURRENCY,
      pipelineDepth: c.BACKUP_PIPELINE_DEPTH,
    }),
  });
}

export const loadInfraConfig = (env: Env) => parseConfig('backup-worker', distributedInfraSchema, env);
