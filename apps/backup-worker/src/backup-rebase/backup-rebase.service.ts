import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  dataObjectName,
  hashFileObjectName,
  manifestDocument,
  manifestObjectName,
  parseBackupCodec,
  planRebase,
  prefixBeforeRebase,
  rebasedPrefix,
  type ChainLayer,
  type ManifestObject,
  type MergeSegment,
} from '@osc/block-storage-domain';
import { BackupPolicyRepository, BackupRepository, type StoredBackup } from '@osc/block-storage-persistence';
import { InvalidInputError, TransientError } from '@osc/errors';
import {
  BACKUP_REBASE_JOB_NAMES,
  backupRebaseQueue,
  type BackupRebaseJob,
  type BackupRebaseJobPayloads,
} from '@osc/contracts';
import { type JobQueue, type Worker } from '@osc/messaging';
import { CLOCK, DATA_SOURCE, JOB_QUEUE, type Clock } from '@osc/platform';
import { readManifest, type BackupLocation } from '../backups/backup-engine';
import { BackupRestorer } from '../backups/backup-restorer';
import { BACKUP_CONFIG, type BackupConfig } from '../backups/backup.config';
import { sharedCopy } from '../backups/chunk-workers';
import { JobTable } from '../jobs/job-table';
import { VOLUME_PATHS, type VolumePaths } from '../volume-backend/volume-paths';

/**
 * Rebasing (ours, issue 21 item 3): a kept incremental whose older backups retention deletes becomes
 * a full backup by merging its chain's objects IN THE STORE, so it stays restorable once they go.
 * The merged objects, hash file and manifest are written under a new prefix beside the old ones
 * (restores keep reading the old chain meanwhile); then one compare-and-set on the row (still
 * `available`, same parent, same prefix) switches it to the new prefix with no parent and gives
 * the parent back a dependent; only then are the old objects removed. A job killed anywhere is run
 * again (journaled job, deterministic names): before the switch it rewrites the same objects, after
 * it only finishes the clean-up. A backup busy (restoring) is retried later.
 */
@Injectable()
export class BackupRebaseService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly log = new Logger('backup-rebase');
  private readonly backups = new BackupRepository();
  private readonly policies = new BackupPolicyRepository();
  private worker: Worker | null = null;

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(JOB_QUEUE) private readonly jobs: JobQueue,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(BACKUP_CONFIG) private readonly config: BackupConfig,
    @Inject(VOLUME_PATHS) private readonly paths: VolumePaths,
    private readonly restorer: BackupRestorer,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const table = new JobTable<BackupRebaseJobPayloads>('backup rebase', BACKUP_REBASE_JOB_NAMES, {
      'backup.rebase': (data) => this.rebase(data),
    });
    this.worker = await this.jobs.process(backupRebaseQueue(this.paths.backend), (job) => table.run(job), {
      concurrency: 1,
      onFailed: (job, err) => {
        if (table.carries(job)) void this.gaveUp(job.data, err);
      },
    });
  }

  async onModuleDestroy(): Promise<void> {
    await this.worker?.close();
  }

  /**
   * A rebase that failed for good stalls its policy's retention (the chain's older backups cannot go
   * while the incremental needs them): say so on the policy, where its owner looks (GET shows
   * `last_error`), and in the log. The next rebase of that policy that succeeds clears it.
   */
  private async gaveUp(data: BackupRebaseJob, err: unknown): Promise<void> {
    const reason = err instanceof Error ? err.message : String(err);
    this.log.error({ msg: 'backup rebase failed', backupId: data.backupId, parentId: data.parentId, reason });
    await this.policies
      .recordRetentionError(
        this.db,
        data.backupId,
        `Rebasing backup ${data.backupId} onto a full failed, so its older backups are kept: ${reason}`,
        this.clock.now(),
      )
      .catch((e: unknown) => this.log.warn(`recording the rebase failure of ${data.backupId}: ${String(e)}`));
  }

  async rebase(data: BackupRebaseJob): Promise<void> {
    const b = await this.backups.findById(this.db, data.backupId, null);
    if (!b) return;
    const loc = this.restorer.location(b);
    if (loc === null) return;
    if (b.parentId !== data.parentId) {
      // Already switched (a re-run after the commit point): finish removing the old objects.
      const before = prefixBeforeRebase(loc.prefix);
      if (b.parentId === null && before !== null)
        await this.removeOldObjects(b, { container: loc.container, prefix: before });
      return;
    }
    if (b.status !== 'available') throw new TransientError(`backup ${b.id} is ${b.status}; its rebase waits`);
    const chain = await this.chainRows(b);
    const layers: ChainLayer[] = [];
    const locations = new Map<string, BackupLocation>();
    let volumeMeta: string | null = null;
    for (const row of chain) {
      const l = this.restorer.location(row);
      if (l === null) throw new InvalidInputError(`Invalid backup: backup ${row.id} has no stored objects.`);
      const m = await readManifest(this.restorer.store, l);
      layers.push({ backupId: row.id, objects: m.objects });
      locations.set(row.id, l);
      volumeMeta = m.volumeMeta;
    }
    const target: BackupLocation = {
      container: loc.container,
      prefix: rebasedPrefix(loc.prefix, data.parentId),
    };
    // A previous run may have left part of the new objects: start clean.
    await this.removeObjects(target);
    const plan = planRebase(layers, this.config.chunkSize);
    const objects = await this.writeMerged(plan.segments, plan.objects, layers, locations, target);
    const store = this.restorer.store;
    await store.write(
      target.container,
      hashFileObjectName(target.prefix),
      await store.read(loc.container, hashFileObjectName(loc.prefix)),
    );
    const doc = JSON.parse(
      (await store.read(loc.container, manifestObjectName(loc.prefix))).toString('utf8'),
    ) as Record<string, unknown>;
    const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
    await store.write(
      target.container,
      manifestObjectName(target.prefix),
      Buffer.from(
        manifestDocument(
          {
            backupId: b.id,
            volumeId: b.volumeId,
            name: text(doc['backup_name']),
            description: text(doc['backup_description']),
            createdAt: String(doc['created_at'] ?? b.createdAt),
            parentId: null,
          },
          objects,
          volumeMeta ?? '{}',
        ),
        'utf8',
      ),
    );
    const switched = await this.db.transaction((em) =>
      this.policies.completeRebase(
        em,
        b.id,
        { parentId: data.parentId, prefix: loc.prefix },
        { prefix: target.prefix, objectCount: objects.length },
        this.clock.now(),
      ),
    );
    if (!switched) {
      // The row moved on meanwhile (deleted, reset, restoring): the new objects are nobody's.
      await this.removeObjects(target);
      const now = await this.backups.findById(this.db, b.id, null);
      if (now && now.status !== 'available' && now.parentId === data.parentId)
        throw new TransientError(`backup ${b.id} is ${now.status}; its rebase waits`);
      return;
    }
    await this.policies.recordRetentionError(this.db, b.id, null, this.clock.now());
    this.log.log({
      msg: 'backup rebased onto a full',
      backupId: b.id,
      parentId: data.parentId,
      objects: objects.length,
    });
    await this.removeOldObjects(b, loc);
  }

  /**
   * Removes a rebased backup's old objects once no restore reads the volume's backups: a restore
   * that started before the switch reads the chain from its old locations. Until then the job
   * waits (retried; a re-run after the switch only finishes this).
   */
  private async removeOldObjects(b: StoredBackup, old: BackupLocation): Promise<void> {
    if (await this.policies.restoreReadsVolume(this.db, b.volumeId))
      throw new TransientError(
        `a restore reads the backups of volume ${b.volumeId}; backup ${b.id}'s old objects wait`,
      );
    await this.removeObjects(old);
  }

  /** The rows of the chain, full first. */
  private async chainRows(b: StoredBackup): Promise<StoredBackup[]> {
    const out: StoredBackup[] = [b];
    for (let cur = b; cur.parentId !== null;) {
      const parent = await this.backups.findById(this.db, cur.parentId, null, { withDeleted: true });
      if (!parent)
        throw new InvalidInputError(`Invalid backup: the parent backup ${cur.parentId} is missing.`);
      out.unshift(parent);
      cur = parent;
      if (out.length > 10_000)
        throw new InvalidInputError(`Invalid backup: the chain of backup ${b.id} is too long.`);
    }
    return out;
  }

  /** Writes the merged objects: each new object is filled from the segments that cover it. */
  private async writeMerged(
    segments: readonly MergeSegment[],
    ranges: readonly { offset: number; length: number }[],
    layers: readonly ChainLayer[],
    locations: ReadonlyMap<string, BackupLocation>,
    target: BackupLocation,
  ): Promise<ManifestObject[]> {
    const store = this.restorer.store;
    const workers = this.restorer.workers;
    const codec = parseBackupCodec(this.config.compression);
    const entries = new Map<string, ManifestObject>();
    for (const l of layers) for (const o of l.objects) entries.set(`${l.backupId}/${o.name}`, o);
    // One decompressed source object at a time is enough: segments come in volume order.
    let cached: { key: string; bytes: Buffer } | null = null;
    const source = async (s: MergeSegment): Promise<Buffer> => {
      const key = `${s.backupId}/${s.object}`;
      if (cached?.key === key) return cached.bytes;
      const entry = entries.get(key);
      const loc = locations.get(s.backupId);
      if (!entry || !loc)
        throw new InvalidInputError(`Invalid backup: object ${s.object} is not in its manifest.`);
      const stored = sharedCopy(await store.read(loc.container, s.object));
      const r = await workers.unpack(
        stored,
        stored.byteLength,
        entry.compression,
        entry.length,
        { md5: entry.md5 },
        0,
      );
      if (r.corrupt)
        throw new InvalidInputError(`Invalid backup: object ${s.object} is corrupt (checksum mismatch).`);
      cached = { key, bytes: Buffer.from(r.bytes) };
      return cached.bytes;
    };
    await store.ensureContainer(target.container);
    const out: ManifestObject[] = [];
    let si = 0;
    for (const [i, range] of ranges.entries()) {
      const chunk = new SharedArrayBuffer(range.length);
      const buf = Buffer.from(chunk);
      const end = range.offset + range.length;
      while (
        si < segments.length &&
        (segments[si]?.offset ?? 0) + (segments[si]?.length ?? 0) <= range.offset
      )
        si++;
      for (let k = si; k < segments.length; k++) {
        const s = segments[k];
        if (!s || s.offset >= end) break;
        const from = Math.max(s.offset, range.offset);
        const to = Math.min(s.offset + s.length, end);
        if (to <= from) continue;
        const bytes = await source(s);
        bytes.copy(
          buf,
          from - range.offset,
          s.objectOffset + (from - s.offset),
          s.objectOffset + (to - s.offset),
        );
      }
      const packed = await workers.pack(chunk, range.length, [[0, range.length]], codec);
      const piece = packed.pieces[0];
      if (!piece) throw new Error('the chunk worker packed nothing');
      const name = dataObjectName(target.prefix, i + 1);
      // A piece stored raw (codec `none`) comes back as the chunk's own buffer, not as bytes of its own.
      const stored =
        piece.bytes === null ? Buffer.from(packed.buf, 0, range.length) : Buffer.from(piece.bytes);
      await store.write(target.container, name, stored);
      out.push({
        name,
        offset: range.offset,
        length: range.length,
        compression: piece.codec,
        md5: piece.md5,
      });
    }
    return out;
  }

  /** Removes one backup's objects (data, hash file, manifest) and nothing else. */
  private async removeObjects(loc: BackupLocation): Promise<void> {
    const store = this.restorer.store;
    await store.deletePrefix(loc.container, `${loc.prefix}-`);
    await store.deletePrefix(loc.container, hashFileObjectName(loc.prefix));
    await store.deletePrefix(loc.container, manifestObjectName(loc.prefix));
  }
}
