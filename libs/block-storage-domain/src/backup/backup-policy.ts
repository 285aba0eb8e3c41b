import { cronExpression, nextCronMatch } from '@osc/cron';
import type { ChunkRange, ManifestObject } from './chunk-format';
import {
  fieldError,
  has,
  invalidInput,
  parseBoolean,
  parseDescription,
  parseInteger,
  parseName,
  parseNullableUuid,
  rejectUnknownKeys,
  requireEnvelope,
  requireKey,
} from '../validation/primitives';

/**
 * Backup policies (ours, issue 21 item 3), pure parts: the request bodies of
 * `/v3/{project_id}/os-backup-policies`, the schedule, whether a run makes a full or an incremental
 * backup or none, which backups retention deletes, and how the oldest kept incremental is rebased
 * onto a full by merging its chain's objects. The API, the cron-scheduler and the worker do the I/O.
 */

export const MAX_BACKUP_POLICY_RETENTION = 1000;
export const MAX_BACKUP_POLICY_FULL_EVERY = 1000;

/** A checked schedule: the client's text and the six-field expression (seconds first) cron-parser runs. */
export interface BackupSchedule {
  readonly schedule: string;
  readonly expression: string;
}

/**
 * A schedule is a five-field cron pattern (`minute hour day-of-month month day-of-week`, UTC) or a
 * nickname (`@hourly`, `@daily`...), read as workflow cron triggers read theirs (`@osc/cron`) but
 * without their seconds field: the finest is every minute. Anything else is a 400.
 */
export function parseBackupSchedule(value: unknown): BackupSchedule {
  if (typeof value !== 'string')
    throw fieldError(
      'schedule',
      value,
      `${value === null ? 'None' : JSON.stringify(value)} is not of type 'string'`,
    );
  const expression = cronExpression(value, { secondsField: false });
  if (expression === null) {
    throw fieldError(
      'schedule',
      value,
      'The schedule is not a valid cron pattern of five fields (minute hour day-of-month month day-of-week) or @hourly, @daily, @weekly, @monthly, @yearly.',
    );
  }
  return { schedule: value.trim(), expression };
}

/** The first run of the schedule strictly after `after` (UTC, whole minutes). */
export function nextBackupRun(schedule: BackupSchedule, after: Date): Date {
  return nextCronMatch(schedule.expression, after);
}

/**
 * Where a due policy goes next: one run per firing however late the scheduler is (missed runs are
 * not made up), the next time strictly after both the due time and now.
 */
export function advanceBackupPolicy(schedule: BackupSchedule, dueAt: Date, now: Date): Date {
  return nextBackupRun(schedule, dueAt.getTime() > now.getTime() ? dueAt : now);
}

export interface BackupPolicyInput {
  readonly name: string | null;
  readonly description: string | null;
  /** Exactly one of volumeId and volumeTypeId is set. */
  readonly volumeId: string | null;
  readonly volumeTypeId: string | null;
  readonly schedule: BackupSchedule;
  /** Backups of each volume the policy keeps (the newest). */
  readonly retention: number;
  /** A full backup after this many incrementals (0: every backup is full). */
  readonly fullEvery: number;
  /** No backup when nothing changed since the volume's last backup. */
  readonly skipUnchanged: boolean;
  readonly enabled: boolean;
}

const CREATE_KEYS = [
  'name',
  'description',
  'volume_id',
  'volume_type_id',
  'schedule',
  'retention',
  'full_every',
  'skip_unchanged',
  'enabled',
];
const UPDATE_KEYS = [
  'name',
  'description',
  'schedule',
  'retention',
  'full_every',
  'skip_unchanged',
  'enabled',
];

/** `POST /os-backup-policies` body `{"backup_policy": {...}}` (strict); Cinder-style 400s. */
export function parseCreateBackupPolicy(body: unknown): BackupPolicyInput {
  const b = requireEnvelope(body, 'backup_policy');
  rejectUnknownKeys(b, CREATE_KEYS, 'backup_policy');
  const volumeId = has(b, 'volume_id') ? parseNullableUuid(b['volume_id'], 'volume_id') : null;
  const volumeTypeId = has(b, 'volume_type_id')
    ? parseNullableUuid(b['volume_type_id'], 'volume_type_id')
    : null;
  if ((volumeId === null) === (volumeTypeId === null))
    throw invalidInput('A backup policy applies to exactly one of volume_id or volume_type_id.');
  return {
    name: has(b, 'name') ? parseName(b['name'], 'name', { nullable: true }) : null,
    description: has(b, 'description') ? parseDescription(b['description']) : null,
    volumeId,
    volumeTypeId,
    schedule: parseBackupSchedule(requireKey(b, 'schedule', 'backup_policy')),
    retention: parseInteger(
      requireKey(b, 'retention', 'backup_policy'),
      'retention',
      1,
      MAX_BACKUP_POLICY_RETENTION,
    ),
    fullEvery: has(b, 'full_every')
      ? parseInteger(b['full_every'], 'full_every', 0, MAX_BACKUP_POLICY_FULL_EVERY)
      : 0,
    skipUnchanged: has(b, 'skip_unchanged') ? parseBoolean(b['skip_unchanged'], 'skip_unchanged') : true,
    enabled: has(b, 'enabled') ? parseBoolean(b['enabled'], 'enabled') : true,
  };
}

export type BackupPolicyUpdate = Partial<Omit<BackupPolicyInput, 'volumeId' | 'volumeTypeId'>>;

/** `PUT /os-backup-policies/{id}`: what changes (the target cannot; at least one field). */
export function parseUpdateBackupPolicy(body: unknown): BackupPolicyUpdate {
  const b = requireEnvelope(body, 'backup_policy');
  rejectUnknownKeys(b, UPDATE_KEYS, 'backup_policy');
  const out: { -readonly [K in keyof BackupPolicyUpdate]: BackupPolicyUpdate[K] } = {};
  if (has(b, 'name')) out.name = parseName(b['name'], 'name', { nullable: true });
  if (has(b, 'description')) out.description = parseDescription(b['description']);
  if (has(b, 'schedule')) out.schedule = parseBackupSchedule(b['schedule']);
  if (has(b, 'retention'))
    out.retention = parseInteger(b['retention'], 'retention', 1, MAX_BACKUP_POLICY_RETENTION);
  if (has(b, 'full_every'))
    out.fullEvery = parseInteger(b['full_every'], 'full_every', 0, MAX_BACKUP_POLICY_FULL_EVERY);
  if (has(b, 'skip_unchanged')) out.skipUnchanged = parseBoolean(b['skip_unchanged'], 'skip_unchanged');
  if (has(b, 'enabled')) out.enabled = parseBoolean(b['enabled'], 'enabled');
  if (Object.keys(out).length === 0)
    throw invalidInput(`At least one of ${UPDATE_KEYS.join(', ')} must be given.`);
  return out;
}

/** A backup of a volume as the policy decisions see it. */
export interface PolicyBackup {
  readonly id: string;
  /** The backup this incremental builds on; null for a full backup. */
  readonly parentId: string | null;
  readonly createdAt: Date;
  /** Made by this policy (retention only ever deletes those). */
  readonly byPolicy: boolean;
  readonly status: string;
}

const byAge = (a: PolicyBackup, b: PolicyBackup): number =>
  a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * What a run makes: a full backup when the volume has none to build on or when `fullEvery`
 * incrementals already follow the newest full; an incremental on the newest available backup
 * otherwise. `fullEvery` 0 makes every backup full.
 */
export function chooseBackupKind(
  backups: readonly PolicyBackup[],
  fullEvery: number,
): { kind: 'full' } | { kind: 'incremental'; parentId: string } {
  const usable = backups.filter((b) => b.status === 'available').sort(byAge);
  const newest = usable[usable.length - 1];
  if (!newest || fullEvery === 0) return { kind: 'full' };
  const byId = new Map(usable.map((b) => [b.id, b]));
  let depth = 0;
  for (let b: PolicyBackup | undefined = newest; b && b.parentId !== null; b = byId.get(b.parentId)) {
    depth++;
    // A chain whose full is gone or not available: start a new one.
    if (!byId.has(b.parentId)) return { kind: 'full' };
  }
  return depth >= fullEvery ? { kind: 'full' } : { kind: 'incremental', parentId: newest.id };
}

/**
 * Skip when nothing changed: the incremental diff against the parent found no changed range and
 * the volume kept its size. The worker computes the ranges while reading; a skipped run leaves no backup.
 */
export const unchangedSinceParent = (
  changed: readonly ChunkRange[],
  volumeBytes: number,
  parentVolumeBytes: number,
): boolean => changed.length === 0 && volumeBytes === parentVolumeBytes;

export interface RetentionPlan {
  /** Kept incrementals whose parent is deleted, oldest first: each becomes a full first. */
  readonly rebase: readonly { readonly id: string; readonly chain: readonly string[] }[];
  /** Deleted after the rebases, newest first (children before their parents). */
  readonly delete: readonly string[];
}

/**
 * Retention: of the policy's available backups of one volume, the newest `retention` stay; the
 * older ones go. A backup that stays (the policy's or not) and builds on one that goes is rebased:
 * `chain` lists the backups to merge, its full first and itself last. Backups not made by the
 * policy are never deleted, nor are backups still in progress; a policy backup another backup
 * that stays was taken from only goes once that one is rebased (always, by construction).
 */
export function chooseRetention(backups: readonly PolicyBackup[], retention: number): RetentionPlan {
  const all = [...backups].sort(byAge);
  const mine = all.filter((b) => b.byPolicy && b.status === 'available');
  const goes = new Set(mine.slice(0, Math.max(0, mine.length - retention)).map((b) => b.id));
  if (goes.size === 0) return { rebase: [], delete: [] };
  const byId = new Map(all.map((b) => [b.id, b]));
  const rebase: { id: string; chain: string[] }[] = [];
  for (const b of all) {
    if (goes.has(b.id) || b.parentId === null || !goes.has(b.parentId)) continue;
    const chain: string[] = [b.id];
    for (let p = byId.get(b.parentId); p; p = p.parentId === null ? undefined : byId.get(p.parentId)) {
      chain.unshift(p.id);
      if (p.parentId !== null && !byId.has(p.parentId))
        throw new Error(`backup ${p.id} builds on ${p.parentId}, which is not among the volume's backups`);
    }
    rebase.push({ id: b.id, chain });
  }
  return {
    rebase,
    delete: all
      .filter((b) => goes.has(b.id))
      .map((b) => b.id)
      .reverse(),
  };
}

/** The objects of one backup of a chain, as its manifest lists them. */
export interface ChainLayer {
  readonly backupId: string;
  readonly objects: readonly ManifestObject[];
}

/** A run of bytes of the merged full: taken from `object` of `backupId`, `objectOffset` into its (uncompressed) data. */
export interface MergeSegment {
  readonly offset: number;
  readonly length: number;
  readonly backupId: string;
  readonly object: string;
  readonly objectOffset: number;
}

export interface RebasePlan {
  /** What the merged full holds, by volume offset; gaps read as zeros on restore (as in a full). */
  readonly segments: readonly MergeSegment[];
  /** The new objects to write: the covered ranges split at `chunkSize`, each filled from `segments`. */
  readonly objects: readonly ChunkRange[];
}

/**
 * Rebasing an incremental onto a full: restore applies its chain's objects in order (full first,
 * later layers overwriting), so the merged full takes every byte from the newest layer that has it.
 * The plan says which object bytes make up each range and how the new objects are cut; the worker
 * reads, writes the new objects and manifest under the kept backup, and only then deletes the rest.
 */
export function planRebase(chain: readonly ChainLayer[], chunkSize: number): RebasePlan {
  if (!Number.isSafeInteger(chunkSize) || chunkSize <= 0) throw new Error(`invalid chunk size ${chunkSize}`);
  // Painting layers oldest first onto an interval list: later layers cut what lies under them.
  let painted: MergeSegment[] = [];
  for (const layer of chain) {
    for (const o of layer.objects) {
      if (o.length <= 0) continue;
      const start = o.offset;
      const end = o.offset + o.length;
      const next: MergeSegment[] = [];
      for (const s of painted) {
        const sEnd = s.offset + s.length;
        if (sEnd <= start || s.offset >= end) {
          next.push(s);
          continue;
        }
        if (s.offset < start) next.push({ ...s, length: start - s.offset });
        if (sEnd > end)
          next.push({
            ...s,
            offset: end,
            length: sEnd - end,
            objectOffset: s.objectOffset + (end - s.offset),
          });
      }
      next.push({
        offset: start,
        length: o.length,
        backupId: layer.backupId,
        object: o.name,
        objectOffset: 0,
      });
      painted = next.sort((a, b) => a.offset - b.offset);
    }
  }
  // New objects: maximal covered runs, split at chunkSize.
  const objects: ChunkRange[] = [];
  let runStart = -1;
  let runEnd = -1;
  const flush = (): void => {
    for (let o = runStart; runStart >= 0 && o < runEnd; o += chunkSize)
      objects.push({ offset: o, length: Math.min(chunkSize, runEnd - o) });
  };
  for (const s of painted) {
    if (runStart >= 0 && s.offset === runEnd) runEnd += s.length;
    else {
      flush();
      runStart = s.offset;
      runEnd = s.offset + s.length;
    }
  }
  flush();
  return { segments: painted, objects };
}

/** The rebase job's name, data and queue are contracts of `@osc/contracts`; re-exported for the domain's callers. */
export { BACKUP_REBASE_JOB, backupRebaseQueue, type BackupRebaseJob } from '@osc/contracts';

/** The object-name prefix of a backup's merged full, from its prefix and the parent it leaves (deterministic: a retried job rewrites the same names). */
export const rebasedPrefix = (prefix: string, parentId: string): string =>
  `${prefix}_rebase_${parentId.slice(0, 8)}`;

/** The prefix a rebased backup had before, or null when `prefix` is not a rebased one. */
export const prefixBeforeRebase = (prefix: string): string | null => {
  const m = /^(.*)_rebase_[0-9a-f]{8}$/.exec(prefix);
  return m ? (m[1] ?? null) : null;
};
