import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import {
  checkPerVolumeSize,
  isMigrating,
  parseBoolean,
  parseExtendArgs,
  parseRevertArgs,
  queryValue,
  refusalOf,
  SNAPSHOT_OPERATIONS,
  supports,
  VOLUME_EXTEND_ATTEMPTS,
  VOLUME_OPERATIONS,
  VOLUME_RESETTABLE_STATUSES,
  volumeQuotaDeltas,
  type VolumeStatus,
} from '@osc/block-storage-domain';
import {
  VOLUME_DELETE_JOB,
  VOLUME_EXTEND_JOB,
  VOLUME_REVERT_JOB,
  VOLUME_UNMANAGE_JOB,
  volumeUnmanageJobId,
} from '@osc/contracts';
import { ConflictError, InvalidInputError, InvalidStateError } from '@osc/errors';
import {
  AttachmentRepository,
  QuotaRepository,
  SnapshotRepository,
  VolumeRepository,
  type StoredVolume,
} from '@osc/block-storage-persistence';
import { OutboxWriter } from '@osc/messaging';
import { CLOCK, DATA_SOURCE, OUTBOX_WRITER, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { backendJob } from '../jobs/outbox-job';
import { expectArgs } from './volume-action-args';
import { loadVolume } from './volume-lookup';

/**
 * Cinder refuses both a delete and an unmanage of a volume that is attached, migrating or in a
 * group (or consistency group): another owner still holds it.
 */
const isHeldElsewhere = (v: StoredVolume): boolean =>
  v.attachStatus === 'attached' ||
  isMigrating(v.migrationStatus) ||
  v.groupId !== null ||
  v.consistencygroupId !== null;

/**
 * The volume lifecycle after creation (BS-7.7.12, BS-8.1.x): delete (plain, forced, cascading),
 * unmanage, extend, revert to a snapshot, admin reset-status and the bootable and read-only
 * flags. Each moves the status by a compare-and-set from VOLUME_OPERATIONS and hands the work to
 * the back end that owns the volume in the same transaction.
 */
@Injectable()
export class VolumeLifecycleService {
  private readonly volumes = new VolumeRepository();
  private readonly snapshots = new SnapshotRepository();
  private readonly quotas = new QuotaRepository();
  private readonly attachmentRows = new AttachmentRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async remove(api: ApiRequest, id: string): Promise<void> {
    const force = queryValue(api.query['force']);
    const forced =
      supports(api.mv, 'volume.force-delete-param') && force !== undefined && parseBoolean(force, 'force');
    const cascade = queryValue(api.query['cascade']);
    const cascaded = cascade !== undefined && parseBoolean(cascade, 'cascade');
    const v = await loadVolume(this.db, api, id);
    api.authorize(forced ? 'volume:force_delete' : 'volume:delete', v.projectId);
    await this.deleteVolume(v, { force: forced, cascade: cascaded });
  }

  /** BS-7.7.12 / BS-8.1.2. `force` skips only the status condition. */
  async deleteVolume(v: StoredVolume, opts: { force: boolean; cascade: boolean }): Promise<void> {
    const now = this.clock.now();
    if (v.host === null) {
      const done = await this.db.transaction(async (em) => {
        const removed = await this.volumes.softDeleteUnplaced(em, v.id, now);
        if (!removed) return false;
        if (removed.consumesQuota)
          await this.quotas.apply(
            em,
            removed.projectId,
            volumeQuotaDeltas(removed.size, removed.volumeTypeName ?? v.volumeTypeName, -1),
            'in_use',
            false,
          );
        return true;
      });
      if (done) return;
      v = (await this.volumes.findById(this.db, v.id, null)) ?? v;
      if (v.host === null) return;
    }
    const operation = opts.force ? VOLUME_OPERATIONS.forceDelete : VOLUME_OPERATIONS.delete;
    const refuse = (): InvalidStateError =>
      new InvalidStateError(refusalOf(operation, { id: v.id, status: v.status }));
    if (isHeldElsewhere(v)) throw refuse();
    const snaps = await this.volumes.snapshotsOf(this.db, v.id);
    if (snaps.length > 0 && !opts.cascade) throw refuse();
    if (
      opts.cascade &&
      snaps.some(
        (s) => !(SNAPSHOT_OPERATIONS.deleteWithVolume.sources as readonly string[]).includes(s.status),
      )
    ) {
      throw new InvalidStateError(
        'Invalid volume: Snapshots of the volume must be available, error or deleting to delete it with cascade.',
      );
    }
    await this.db.transaction(async (em) => {
      if (!(await this.volumes.transition(em, v.id, operation, now))) throw refuse();
      for (const s of snaps)
        await this.snapshots.transition(em, s.id, SNAPSHOT_OPERATIONS.deleteWithVolume, now);
      await this.outbox.add(
        em,
        backendJob(v.host, {
          id: `volume-delete-${v.id}`,
          name: VOLUME_DELETE_JOB,
          data: { volumeId: v.id },
          partitionKey: v.id,
        }),
      );
    });
  }

  /**
   * `os-unmanage` (admin): Cinder's delete conditions (status available, error, error_restoring,
   * error_extending or error_managing; not attached, migrating, in a group or with snapshots) and
   * no encryption; → `unmanaging`, and the owning back end removes the row and releases the quota
   * while the file stays where it is. A volume no back end ever received has nothing to keep: it
   * is removed as by a delete.
   */
  async unmanage(v: StoredVolume): Promise<void> {
    if (v.host === null) return this.deleteVolume(v, { force: false, cascade: false });
    if (v.encryptionKeyId !== null)
      throw new InvalidInputError('Invalid volume: Unmanaging encrypted volumes is not supported.');
    const refuse = (): InvalidStateError =>
      new InvalidStateError(refusalOf(VOLUME_OPERATIONS.unmanage, { id: v.id, status: v.status }));
    if (isHeldElsewhere(v)) throw refuse();
    if ((await this.volumes.countActiveSnapshots(this.db, v.id)) > 0) throw refuse();
    await this.db.transaction(async (em) => {
      if (!(await this.volumes.transition(em, v.id, VOLUME_OPERATIONS.unmanage, this.clock.now())))
        throw refuse();
      await this.outbox.add(
        em,
        backendJob(v.host, {
          id: volumeUnmanageJobId(v.id),
          name: VOLUME_UNMANAGE_JOB,
          data: { volumeId: v.id },
          partitionKey: v.id,
        }),
      );
    });
  }

  /** `os-set_bootable` (BS-8.1.x): the flag only; nothing moves. */
  async setBootable(v: StoredVolume, args: unknown): Promise<void> {
    const a = expectArgs(args, 'os-set_bootable');
    if (!('bootable' in a))
      throw new InvalidInputError(
        "Invalid input for field/attribute os-set_bootable. Value: {}. 'bootable' is a required property",
      );
    await this.volumes.update(
      this.db,
      v.id,
      { bootable: parseBoolean(a['bootable'], 'bootable') },
      this.clock.now(),
    );
  }

  /** `os-update_readonly_flag`: the `readonly` admin-metadata key Nova reads when it attaches. */
  async updateReadonlyFlag(v: StoredVolume, args: unknown): Promise<void> {
    const a = expectArgs(args, 'os-update_readonly_flag');
    if (!('readonly' in a))
      throw new InvalidInputError(
        "Invalid input for field/attribute os-update_readonly_flag. Value: {}. 'readonly' is a required property",
      );
    const readonly = parseBoolean(a['readonly'], 'readonly');
    await this.volumes.update(
      this.db,
      v.id,
      { admin_metadata: { ...v.adminMetadata, readonly: readonly ? 'True' : 'False' } },
      this.clock.now(),
    );
  }

  /**
   * BS-8.1.10 (3.40): the snapshot must be the volume's latest and of the volume's size (400);
   * volume available → reverting and snapshot available → restoring (else 409), then the back end
   * copies the snapshot's bytes over the volume and returns both to available.
   */
  async revert(v: StoredVolume, args: unknown): Promise<void> {
    const { snapshotId } = parseRevertArgs(args);
    const snaps = await this.volumes.snapshotsOf(this.db, v.id);
    const time = (t: string | Date): number => new Date(t).getTime();
    const latest = [...snaps].sort(
      (a, b) => time(b.createdAt) - time(a.createdAt) || (b.id < a.id ? -1 : 1),
    )[0];
    if (!latest) throw new InvalidInputError(`Volume ${v.id} doesn't have any snapshots.`);
    if (snapshotId === null || snapshotId !== latest.id)
      throw new InvalidInputError(
        `Specified snapshot ${snapshotId ?? 'None'} is None or not the latest one of volume ${v.id}.`,
      );
    if (v.size !== latest.size) {
      throw new InvalidInputError(
        `Can't revert volume ${v.id} to its latest snapshot ${latest.id}. The volume size must be equal to the snapshot size.`,
      );
    }
    await this.db.transaction(async (em) => {
      const now = this.clock.now();
      if (!(await this.volumes.transition(em, v.id, VOLUME_OPERATIONS.revert, now))) {
        throw new ConflictError(
          refusalOf(VOLUME_OPERATIONS.revert, { id: v.id, status: v.status, snapshot: latest.id }),
        );
      }
      if (!(await this.snapshots.transition(em, latest.id, SNAPSHOT_OPERATIONS.revert, now))) {
        throw new ConflictError(
          refusalOf(SNAPSHOT_OPERATIONS.revert, { id: latest.id, status: latest.status, volume: v.id }),
        );
      }
      await this.outbox.add(
        em,
        backendJob(v.host, {
          id: `volume-revert-${v.id}-${latest.id}-${now.getTime()}`,
          name: VOLUME_REVERT_JOB,
          data: { volumeId: v.id, snapshotId: latest.id },
          partitionKey: v.id,
        }),
      );
    });
  }

  /** BS-7.7.14 / BS-8.1.3: quota for the increase is reserved now and committed by the back end. */
  async extend(api: ApiRequest, v: StoredVolume, args: unknown): Promise<void> {
    const { newSize } = parseExtendArgs(args);
    const operation = supports(api.mv, 'volume.extend-in-use')
      ? VOLUME_OPERATIONS.extendInUse
      : VOLUME_OPERATIONS.extend;
    if (!(operation.sources as readonly VolumeStatus[]).includes(v.status)) {
      throw new InvalidStateError(
        `Invalid volume: Volume ${v.id} status must be ${operation.sources.join(' or ')} to extend, currently ${v.status}.`,
      );
    }
    // The bytes being copied to another back end must not change under the copy.
    if (isMigrating(v.migrationStatus))
      throw new InvalidStateError(
        `Invalid volume: Volume ${v.id} is part of an active migration and cannot be extended.`,
      );
    if (newSize <= v.size) {
      throw new InvalidInputError(
        `Invalid input received: New size for extend must be greater than current size. (current: ${v.size}, extended: ${newSize}).`,
      );
    }
    checkPerVolumeSize(newSize, await this.quotas.limits(this.db, v.projectId));
    const delta = newSize - v.size;
    const deltas = volumeQuotaDeltas(delta, v.volumeTypeName).filter((d) =>
      d.resource.startsWith('gigabytes'),
    );
    await this.db.transaction(async (em: EntityManager) => {
      // The reservation is a row (with the target size) so the back end, its recovery after a
      // restart, or a final job failure commits or releases exactly these units once.
      await this.quotas.reserve(em, {
        id: randomUUID(),
        projectId: v.projectId,
        volumeId: v.id,
        operation: 'extend',
        newSize,
        deltas,
        now: this.clock.now(),
      });
      if (!(await this.volumes.transition(em, v.id, operation, this.clock.now()))) {
        throw new InvalidStateError(refusalOf(operation, { id: v.id, status: v.status }));
      }
      await this.outbox.add(
        em,
        backendJob(v.host, {
          id: `volume-extend-${v.id}-${newSize}`,
          name: VOLUME_EXTEND_JOB,
          data: { volumeId: v.id, newSize },
          partitionKey: v.id,
          attempts: VOLUME_EXTEND_ATTEMPTS,
        }),
      );
    });
  }

  /** BS-8.1.11 (admin): deleting, error_deleting and detaching cannot be set (BS-13.4). */
  async resetStatus(v: StoredVolume, args: unknown): Promise<void> {
    const a = expectArgs(args, 'os-reset_status');
    const status = a['status'];
    if (status === undefined && a['attach_status'] === undefined && a['migration_status'] === undefined) {
      throw new InvalidInputError(
        'Invalid input received: Must specify status, attach_status or migration_status.',
      );
    }
    const set: Record<string, unknown> = {};
    if (status !== undefined) {
      if (typeof status !== 'string' || !(VOLUME_RESETTABLE_STATUSES as readonly string[]).includes(status)) {
        throw new InvalidInputError(
          `Invalid input received: status must be one of ${VOLUME_RESETTABLE_STATUSES.join(', ')}.`,
        );
      }
      if (status === 'in-use' && v.attachments.length === 0)
        throw new InvalidInputError('Invalid input received: a volume without attachments cannot be in-use.');
      set['status'] = status;
    }
    if (a['attach_status'] !== undefined) {
      if (a['attach_status'] !== 'attached' && a['attach_status'] !== 'detached')
        throw new InvalidInputError('Invalid input received: attach_status must be attached or detached.');
      set['attach_status'] = a['attach_status'];
    }
    if (a['migration_status'] !== undefined) {
      const ms = a['migration_status'];
      if (!['migrating', 'error', 'success', 'completing', 'none', 'starting'].includes(String(ms)))
        throw new InvalidInputError('Invalid input received: invalid migration_status.');
      set['migration_status'] = ms === 'none' ? null : ms;
    }
    await this.db.transaction(async (em) => {
      await this.volumes.update(em, v.id, set, this.clock.now());
      // Cinder's `_clean_volume_attachment`: attach_status detached removes every attachment.
      if (set['attach_status'] === 'detached')
        await this.attachmentRows.softDeleteOfVolume(em, v.id, this.clock.now());
      // Resetting a volume out of `extending` abandons the extend: its reserved quota goes back.
      if (v.status === 'extending' && set['status'] !== undefined && set['status'] !== 'extending')
        await this.quotas.releaseReservationsOf(em, v.id);
    });
  }
}
