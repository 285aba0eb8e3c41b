import { rename, stat } from 'node:fs/promises';
import path from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  checkPerVolumeSize,
  invalidReferenceReason,
  managedIdOf,
  snapshotQuotaDeltas,
  volumeQuotaDeltas,
  SNAPSHOT_OPERATIONS,
  VOLUME_OPERATIONS,
} from '@osc/block-storage-domain';
import {
  QuotaRepository,
  SnapshotRepository,
  VolumeRepository,
  VolumeTypeRepository,
  type StoredSnapshot,
  type StoredVolume,
} from '@osc/block-storage-persistence';
import {
  MANAGE_SOURCE_METADATA_KEY,
  type SnapshotJob,
  type SnapshotManageJob,
  type VolumeDeleteJob,
  type VolumeManageJob,
} from '@osc/contracts';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import { FileVolumeDriver } from './file-volume-driver';
import { PoolReporter } from './pool-reporter';
import { removeSnapshotRow } from './snapshot-removal';
import { GIB } from './sparse-file';

/** A manage whose reference cannot be adopted (no such file, not this back end's name, already managed). */
class ManageRefused extends Error {}

/**
 * Manage (adopt a `volume-<uuid>` or `snapshot-<uuid>` file already in this back end's directory)
 * and unmanage (forget the row, keep the file). Each job checks the row is still `managing`,
 * `creating` with a manage source, or `unmanaging`; quota and status settle in one transaction
 * with the file's rename.
 */
@Injectable()
export class VolumeManage {
  private readonly log = new Logger('volume-backend');
  private readonly volumes = new VolumeRepository();
  private readonly snapshots = new SnapshotRepository();
  private readonly quotas = new QuotaRepository();
  private readonly types = new VolumeTypeRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly driver: FileVolumeDriver,
    private readonly reporter: PoolReporter,
  ) {}

  /**
   * Checks that `source` names a `<kind>-<uuid>` file in this back end's directory that no live
   * volume (snapshot) owns, and returns its size in GiB (rounded up, at least 1) and its path. When
   * the file is gone but `target` exists, an earlier run already renamed it (a restart between the
   * rename and the commit): the size comes from `target` and there is nothing left to rename.
   */
  private async adoptable(
    kind: 'volume' | 'snapshot',
    source: string,
    target: string,
  ): Promise<{ size: number; from: string | null }> {
    if (source === '')
      throw new ManageRefused(
        invalidReferenceReason(kind, '{}', 'the reference must name the file with source-name or source-id'),
      );
    const owner = managedIdOf(source, kind);
    if (owner === null || source !== `${kind}-${owner}`) {
      throw new ManageRefused(
        invalidReferenceReason(
          kind,
          source,
          `the files of back end ${this.driver.backend} are named ${kind}-<uuid>`,
        ),
      );
    }
    const from = path.join(this.driver.directory, source);
    const found = await stat(from).catch(() => null);
    if (found === null) {
      const adopted = await stat(target).catch(() => null);
      if (adopted?.isFile()) return { size: Math.max(1, Math.ceil(adopted.size / GIB)), from: null };
      throw new ManageRefused(
        invalidReferenceReason(kind, source, `no such file on back end ${this.driver.backend}`),
      );
    }
    if (!found.isFile()) throw new ManageRefused(invalidReferenceReason(kind, source, 'not a regular file'));
    const live =
      kind === 'volume'
        ? await this.volumes.findById(this.db, owner, null)
        : await this.snapshots.findById(this.db, owner, null);
    if (live)
      throw new ManageRefused(
        invalidReferenceReason(kind, source, `it is already managed as ${kind} ${owner}`),
      );
    return { size: Math.max(1, Math.ceil(found.size / GIB)), from };
  }

  /**
   * Adopts the file of a `managing` volume: in one transaction the gigabytes of the size found are
   * charged (the count was charged by the API), the volume becomes available with that size and
   * the file is renamed to `volume-<id>` (a failed rename rolls the rest back). A bad reference or
   * a quota that does not fit ends in `error_managing`, the file untouched.
   */
  async manageVolume(data: VolumeManageJob): Promise<void> {
    const v = await this.volumes.findById(this.db, data.volumeId, null);
    if (!v || v.status !== 'managing' || !this.driver.ownsPool(v.host)) return;
    const target = this.driver.volumeFile(v.id);
    try {
      const { size, from } = await this.adoptable('volume', data.source, target);
      await this.db.transaction(async (em) => {
        const now = this.clock.now();
        checkPerVolumeSize(size, await this.quotas.limits(em, v.projectId));
        await this.quotas.apply(
          em,
          v.projectId,
          volumeQuotaDeltas(size, v.volumeTypeName).filter((d) => d.resource.startsWith('gigabytes')),
        );
        if (
          !(await this.volumes.transition(em, v.id, VOLUME_OPERATIONS.managed, now, {
            size,
            service_uuid: this.driver.serviceUuid,
          }))
        ) {
          throw new ManageRefused('the volume is no longer managing');
        }
        await this.volumes.setAdminMetadataKey(em, v.id, MANAGE_SOURCE_METADATA_KEY, null);
        if (from !== null) await rename(from, target);
      });
    } catch (err) {
      this.log.warn(`managing ${data.source || '(no reference)'} as volume ${v.id} failed: ${String(err)}`);
      await this.failVolumeManage(v, err instanceof Error ? err.message : String(err));
      return;
    }
    this.reporter.changed({ files: true });
  }

  /** `managing` → `error_managing` with the reason; the volume gives back its count and consumes no quota (Cinder). */
  private async failVolumeManage(v: StoredVolume, reason: string): Promise<void> {
    await this.db.transaction(async (em) => {
      const now = this.clock.now();
      if (
        !(await this.volumes.transition(em, v.id, VOLUME_OPERATIONS.manageFailed, now, {
          error_reason: reason.slice(0, 1000),
          use_quota: false,
        }))
      )
        return;
      await this.volumes.setAdminMetadataKey(em, v.id, MANAGE_SOURCE_METADATA_KEY, null);
      if (v.consumesQuota)
        await this.quotas.apply(
          em,
          v.projectId,
          volumeQuotaDeltas(v.size, v.volumeTypeName, -1),
          'in_use',
          false,
        );
    });
  }

  /** `unmanaging` → the row is removed (marked unmanaged) and its quota released; the file stays. */
  async unmanageVolume(data: VolumeDeleteJob): Promise<void> {
    const v = await this.volumes.findById(this.db, data.volumeId, null);
    if (!v || v.status !== 'unmanaging') return;
    await this.db.transaction(async (em) => {
      const removed = await this.volumes.softDeleteUnmanaged(em, v.id, this.clock.now());
      if (removed && removed.consumesQuota)
        await this.quotas.apply(
          em,
          removed.projectId,
          volumeQuotaDeltas(removed.size, v.volumeTypeName, -1),
          'in_use',
          false,
        );
    });
    this.reporter.changed({ files: true });
  }

  /**
   * Adopts the file of a managed snapshot (`creating` with a manage source): the API charged the
   * volume's size; the gigabytes are corrected to the file's size, the snapshot becomes available
   * and the file is renamed to `snapshot-<id>`, in one transaction. Failure → `error`.
   */
  async manageSnapshot(data: SnapshotManageJob): Promise<void> {
    const s = await this.snapshots.findById(this.db, data.snapshotId, null);
    if (!s || s.status !== 'creating' || (s.manageSource ?? null) === null || !this.driver.ownsPool(s.host))
      return;
    const target = this.driver.snapshotFile(s.id);
    const typeName =
      s.volumeTypeId === null ? null : ((await this.types.findAny(this.db, s.volumeTypeId))?.name ?? null);
    try {
      const { size, from } = await this.adoptable('snapshot', data.source, target);
      await this.db.transaction(async (em) => {
        const now = this.clock.now();
        if (s.consumesQuota && size !== s.size) {
          await this.quotas.apply(
            em,
            s.projectId,
            snapshotQuotaDeltas(size - s.size, typeName).filter((d) => d.resource.startsWith('gigabytes')),
          );
        }
        if (
          !(await this.snapshots.transition(em, s.id, SNAPSHOT_OPERATIONS.created, now, {
            size,
            progress: '100%',
            manage_source: null,
          }))
        ) {
          throw new ManageRefused('the snapshot is no longer creating');
        }
        if (from !== null) await rename(from, target);
      });
    } catch (err) {
      this.log.warn(`managing ${data.source || '(no reference)'} as snapshot ${s.id} failed: ${String(err)}`);
      await this.failSnapshotManage(s, err instanceof Error ? err.message : String(err));
      return;
    }
    this.reporter.changed({ files: true });
  }

  /** `creating` → `error` with the reason; the snapshot keeps the quota charged for it until it is deleted. */
  private async failSnapshotManage(s: StoredSnapshot, reason: string): Promise<void> {
    await this.snapshots.transition(this.db, s.id, SNAPSHOT_OPERATIONS.createFailed, this.clock.now(), {
      error_reason: reason.slice(0, 1000),
      manage_source: null,
    });
  }

  /** `unmanaging` → the row is removed and its quota released; the file stays. */
  async unmanageSnapshot(data: SnapshotJob): Promise<void> {
    const s = await this.snapshots.findById(this.db, data.snapshotId, null);
    if (!s || s.status !== 'unmanaging') return;
    await removeSnapshotRow(this.db, this.clock, s, 'unmanaging');
    this.reporter.changed({ files: true });
  }
}
