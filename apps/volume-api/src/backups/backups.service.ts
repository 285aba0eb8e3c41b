import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  BACKUP_DRIVER_IDS,
  BACKUP_FILTER_FIELDS,
  admitFilters,
  backupDetailView,
  backupQuotaDeltas,
  backupSortKeys,
  backupSummaryView,
  exportRecordView,
  isTrueish,
  nextPageLink,
  parseActionBody,
  parseBackupResetStatus,
  parseBooleanFilter,
  parseCreateBackup,
  parseImportRecord,
  parsePaging,
  parseRestoreBackup,
  parseUpdateBackup,
  queryValue,
  SORT_ALIASES,
  supports,
  type BackupStatus,
  VOLUME_OPERATIONS,
  refusalOf,
  BACKUP_OPERATIONS,
} from '@osc/block-storage-domain';
import {
  BackupRepository,
  PoolRepository,
  QuotaRepository,
  SnapshotRepository,
  startBackup,
  VolumeRepository,
  type StoredBackup,
} from '@osc/block-storage-persistence';
import {
  BACKUP_DELETE_JOB,
  BACKUP_IMPORT_JOB,
  BACKUP_RESTORE_JOB,
  type BackupJobPayloads,
  type BackupRestoreJob,
  type JobOf,
} from '@osc/contracts';
import {
  InvalidInputError,
  InvalidStateError,
  NotFoundError,
  OverLimitError,
  TransientError,
} from '@osc/errors';
import { OutboxWriter } from '@osc/messaging';
import { CLOCK, DATA_SOURCE, OUTBOX_WRITER, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { VOLUME_API_CONFIG, type VolumeApiConfig } from '../volume-api.tokens';
import { backendOf, backupJob } from '../jobs/outbox-job';
import { VolumeCreateService } from '../volumes/volume-create.service';
import { volumeNotFound } from '../volumes/volume-lookup';

const backupNotFound = (id: string): NotFoundError =>
  new NotFoundError('Backup', id, `Backup ${id} could not be found.`);

const BACKUP_ACTIONS = ['os-reset_status', 'os-force_delete'] as const;

/**
 * The service a backup row carries until its worker records its own driver (BS-11.1): the API does
 * not know which driver (BACKUP_DRIVER) the back-end hosts run.
 */
const DRIVER = BACKUP_DRIVER_IDS.posix;

/**
 * An import names the driver that exported it. Every driver of this product (posix, swift, s3)
 * writes the same chunked format, so a record of any of them is handed to a worker, which reads
 * the objects in its own store (copied there beforehand when the drivers differ) or ends the
 * import in `error` when they are not there.
 */
const importableFrom = (service: string): boolean =>
  Object.values(BACKUP_DRIVER_IDS).some((id) => id.startsWith(service));

/** How long a restore waits for the volume it created to settle (BS-7.9.7). */
const NEW_VOLUME_WAIT_MS = 120_000;

/**
 * Backups (spec 7.9, 8.3). Each operation moves the backup (and its volume or snapshot) by
 * compare-and-set and commits the worker's job in the same transaction (outbox), on the backup
 * queue of the back end that holds the bytes. Quota is reserved at create/import and settled by
 * the worker exactly once (the reservation row is keyed by the backup id).
 */
@Injectable()
export class BackupsService {
  private readonly backups = new BackupRepository();
  private readonly volumes = new VolumeRepository();
  private readonly snapshots = new SnapshotRepository();
  private readonly quotas = new QuotaRepository();
  private readonly pools = new PoolRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(VOLUME_API_CONFIG) private readonly config: VolumeApiConfig,
    private readonly volumesService: VolumeCreateService,
  ) {}

  private async load(api: ApiRequest, id: string): Promise<StoredBackup> {
    const b = await this.backups.findById(this.db, id, api.isAdmin ? null : api.ctx.projectId);
    if (!b) throw backupNotFound(id);
    return b;
  }

  /** Back ends with a live worker (fresh pool stats); a backup needs one (BS-7.9.4: else 503). */
  private async liveBackends(): Promise<string[]> {
    const since = new Date(this.clock.now().getTime() - this.config.serviceDownSeconds * 1000);
    return [...new Set((await this.pools.listFresh(this.db, since)).map((p) => p.backend))];
  }

  private async requireLive(backend: string): Promise<void> {
    if (!(await this.liveBackends()).includes(backend))
      throw new TransientError('Service cinder-backup could not be found.');
  }

  private job(backend: string, job: JobOf<BackupJobPayloads>, id: string, partitionKey: string) {
    return backupJob(backend, {
      ...job,
      id: `${job.name.replace('.', '-')}-${id}`,
      partitionKey,
      backoffMs: 500,
    });
  }

  async create(api: ApiRequest, body: unknown): Promise<Record<string, unknown>> {
    api.authorize('backup:create');
    const input = parseCreateBackup(body, api.mv);
    const scope = api.isAdmin ? null : api.ctx.projectId;
    const v = await this.volumes.findById(this.db, input.volumeId, scope);
    if (!v) throw volumeNotFound(input.volumeId);
    const operation = input.force ? VOLUME_OPERATIONS.forceBackup : VOLUME_OPERATIONS.backup;
    if (!['available', 'in-use'].includes(v.status)) {
      throw new InvalidStateError(
        `Invalid volume: Volume to be backed up must be available or in-use, but the current status is "${v.status}".`,
      );
    }
    if (v.status === 'in-use' && !input.force) {
      throw new InvalidStateError('Invalid volume: Backing up an in-use volume must use the force flag.');
    }
    let dataTimestamp: Date | string = this.clock.now();
    if (input.snapshotId !== null) {
      const s = await this.snapshots.findById(this.db, input.snapshotId, scope);
      if (!s)
        throw new NotFoundError(
          'Snapshot',
          input.snapshotId,
          `Snapshot ${input.snapshotId} could not be found.`,
        );
      if (s.volumeId !== v.id)
        throw new InvalidInputError(
          `Invalid input received: Snapshot ${s.id} does not belong to volume ${v.id}.`,
        );
      if (s.status !== 'available')
        throw new InvalidStateError(
          `Invalid snapshot: Snapshot to be backed up must be available, but the current status is "${s.status}".`,
        );
      dataTimestamp = new Date(`${String(s.createdAt)}Z`);
    }
    if (v.host === null)
      throw new InvalidStateError(`Invalid volume: Volume ${v.id} is not placed on a back end.`);
    const backend = backendOf(v.host);
    await this.requireLive(backend);
    let parentId: string | null = null;
    if (input.incremental) {
      const parent = await this.backups.latestAvailable(
        this.db,
        api.ctx.projectId,
        v.id,
        input.snapshotId !== null ? dataTimestamp : null,
      );
      if (!parent)
        throw new InvalidInputError('Invalid backup: No backups available to do an incremental backup.');
      parentId = parent.id;
    }
    const now = this.clock.now();
    const id = randomUUID();
    const backup: StoredBackup = {
      id,
      projectId: api.ctx.projectId,
      userId: api.ctx.userId,
      volumeId: v.id,
      snapshotId: input.snapshotId,
      parentId,
      name: input.name,
      description: input.description,
      status: 'creating',
      failReason: null,
      size: v.size,
      objectCount: 0,
      availabilityZone: input.availabilityZone ?? v.availabilityZone,
      container: input.container,
      host: backend,
      service: DRIVER,
      serviceMetadata: null,
      numDependentBackups: 0,
      metadata: input.metadata,
      encryptionKeyId: v.encrypted ? v.encryptionKeyId : null,
      restoreVolumeId: null,
      dataTimestamp,
      createdAt: now,
      updatedAt: null,
      volumePreviousStatus: input.snapshotId !== null ? 'available' : v.status,
      importRecord: null,
      deleted: false,
    };
    await this.db.transaction(async (em) => {
      const job = await startBackup(em, { ...backup, host: backend }, { operation, status: v.status }, now);
      await this.outbox.add(em, job);
    });
    return { backup: backupSummaryView(api.view, backup) };
  }

  /** `extensions.progress`: show our progress field (the client asked with its header). */
  async list(
    api: ApiRequest,
    detail: boolean,
    extensions: { progress?: boolean } = {},
  ): Promise<Record<string, unknown>> {
    api.authorize('backup:get_all');
    const allTenants = api.isAdmin && isTrueish(queryValue(api.query['all_tenants']));
    const admitted = admitFilters('backup', api.query, { mv: api.mv, isAdmin: api.isAdmin });
    if (!allTenants) delete admitted['project_id'];
    const filters: Record<string, string> = {};
    for (const [k, v] of Object.entries(admitted))
      filters[(BACKUP_FILTER_FIELDS as readonly string[]).includes(k) ? k : `?${k}`] = v;
    const paging = parsePaging(api.query, {
      maxLimit: this.config.maxLimit,
      sortKeys: backupSortKeys(api.mv),
      sortAliases: SORT_ALIASES,
    });
    const withCountRaw = queryValue(api.query['with_count']);
    const withCount =
      supports(api.mv, 'list.with-count') &&
      withCountRaw !== undefined &&
      parseBooleanFilter('with_count', withCountRaw, api.mv);
    const projectId = allTenants ? null : api.ctx.projectId;
    if (paging.marker !== null && !(await this.backups.findById(this.db, paging.marker, projectId))) {
      throw new NotFoundError('Marker', paging.marker, `Marker ${paging.marker} could not be found.`);
    }
    const page = await this.backups.list(this.db, projectId, filters, paging, withCount);
    const out: Record<string, unknown> = {
      backups: page.items.map((b) =>
        detail ? backupDetailView(api.view, b, extensions) : backupSummaryView(api.view, b),
      ),
    };
    const last = page.items[page.items.length - 1];
    if (last && page.items.length === paging.limit)
      out['backups_links'] = [nextPageLink(api.links, api.collectionPath, api.query, last.id)];
    if (page.count !== null) out['count'] = page.count;
    return out;
  }

  async show(
    api: ApiRequest,
    id: string,
    extensions: { progress?: boolean } = {},
  ): Promise<Record<string, unknown>> {
    const b = await this.load(api, id);
    api.authorize('backup:get', b.projectId);
    return { backup: backupDetailView(api.view, b, extensions) };
  }

  async update(api: ApiRequest, id: string, body: unknown): Promise<Record<string, unknown>> {
    if (!supports(api.mv, 'backup.update'))
      throw new NotFoundError('resource', id, 'The resource could not be found.');
    const input = parseUpdateBackup(body, api.mv);
    const b = await this.load(api, id);
    api.authorize('backup:update', b.projectId);
    const set: Record<string, unknown> = {};
    if (input.name !== undefined) set['display_name'] = input.name;
    if (input.description !== undefined) set['display_description'] = input.description;
    if (input.metadata !== undefined) set['metadata'] = input.metadata;
    await this.backups.update(this.db, b.id, set, this.clock.now());
    return {
      backup: backupSummaryView(api.view, { id: b.id, name: input.name !== undefined ? input.name : b.name }),
    };
  }

  async remove(api: ApiRequest, id: string, force: boolean): Promise<void> {
    const b = await this.load(api, id);
    api.authorize(
      force ? 'volume_extension:backup_admin_actions:force_delete' : 'backup:delete',
      b.projectId,
    );
    const operation = force ? BACKUP_OPERATIONS.forceDelete : BACKUP_OPERATIONS.delete;
    if (!(operation.sources as readonly BackupStatus[]).includes(b.status)) {
      throw new InvalidStateError(
        `Invalid backup: Backup status must be available or error and not ${b.status}.`,
      );
    }
    if (b.numDependentBackups > 0)
      throw new InvalidStateError('Invalid backup: Incremental backups exist for this backup.');
    await this.db.transaction(async (em) => {
      if (!(await this.backups.transition(em, b.id, operation, this.clock.now()))) {
        throw new InvalidStateError(refusalOf(operation, { id: b.id, status: b.status }));
      }
      await this.outbox.add(
        em,
        this.job(b.host ?? '', { name: BACKUP_DELETE_JOB, data: { backupId: b.id } }, b.id, b.id),
      );
    });
  }

  async action(api: ApiRequest, id: string, body: unknown): Promise<void> {
    const { action, args } = parseActionBody(body, BACKUP_ACTIONS);
    if (action === 'os-force_delete') return this.remove(api, id, true);
    const status = parseBackupResetStatus(args);
    const b = await this.load(api, id);
    api.authorize('volume_extension:backup_admin_actions:reset_status', b.projectId);
    await this.backups.update(this.db, b.id, { status }, this.clock.now());
  }

  async restore(api: ApiRequest, id: string, body: unknown): Promise<Record<string, unknown>> {
    const input = parseRestoreBackup(body);
    const b = await this.load(api, id);
    api.authorize('backup:restore', b.projectId);
    if (b.status !== 'available')
      throw new InvalidStateError(`Invalid backup: Backup status must be available, but it is ${b.status}.`);
    let volumeId = input.volumeId;
    let newVolume = false;
    if (volumeId === null) {
      const name = input.name ?? `restore_backup_${b.id}`;
      let created: Record<string, unknown>;
      try {
        created = await this.volumesService.create(api, {
          volume: {
            size: b.size,
            name,
            description: 'auto-created_from_restore_from_backup',
            availability_zone: b.availabilityZone ?? undefined,
          },
        });
      } catch (err) {
        if (err instanceof OverLimitError)
          throw new OverLimitError(err.message.replace(/^[A-Za-z]+: /, ''), 0);
        throw err;
      }
      volumeId = String((created['volume'] as Record<string, unknown>)['id']);
      newVolume = true;
      await this.waitSettled(volumeId);
    }
    const v = await this.volumes.findById(this.db, volumeId, api.isAdmin ? null : api.ctx.projectId);
    if (!v) throw volumeNotFound(volumeId);
    if (v.status !== 'available')
      throw new InvalidStateError(
        `Invalid volume: Volume to be restored to must be available, but the current status is "${v.status}".`,
      );
    if (v.size < b.size)
      throw new InvalidInputError(
        `Invalid volume: volume size ${v.size}GB is too small to restore backup of size ${b.size}GB.`,
      );
    if (v.host === null)
      throw new InvalidStateError(`Invalid volume: Volume ${v.id} is not placed on a back end.`);
    const backend = backendOf(v.host);
    await this.requireLive(backend);
    const now = this.clock.now();
    await this.db.transaction(async (em) => {
      if (
        !(await this.backups.transition(em, b.id, BACKUP_OPERATIONS.restore, now, {
          restore_volume_id: v.id,
        }))
      ) {
        throw new InvalidStateError(refusalOf(BACKUP_OPERATIONS.restore, { id: b.id, status: b.status }));
      }
      if (!(await this.volumes.transition(em, v.id, VOLUME_OPERATIONS.restoreBackup, now))) {
        throw new InvalidStateError(
          refusalOf(VOLUME_OPERATIONS.restoreBackup, { id: v.id, status: v.status }),
        );
      }
      const data: BackupRestoreJob = { backupId: b.id, volumeId: v.id, newVolume };
      await this.outbox.add(em, {
        ...this.job(backend, { name: BACKUP_RESTORE_JOB, data }, `${b.id}-${v.id}-${now.getTime()}`, v.id),
      });
    });
    return { restore: { backup_id: b.id, volume_id: v.id, volume_name: v.name } };
  }

  /** A volume created for a restore must leave `creating` before the restore may start (BS-7.9.7). */
  private async waitSettled(volumeId: string): Promise<void> {
    const until = Date.now() + NEW_VOLUME_WAIT_MS;
    for (;;) {
      const v = await this.volumes.findById(this.db, volumeId, null);
      if (!v) throw volumeNotFound(volumeId);
      if (v.status === 'available') return;
      if (v.status !== 'creating')
        throw new InvalidStateError(
          `Invalid volume: The volume created for the restore ended in ${v.status}.`,
        );
      if (Date.now() > until)
        throw new TransientError('The volume created for the restore did not become available in time.');
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async exportRecord(api: ApiRequest, id: string): Promise<Record<string, unknown>> {
    const b = await this.load(api, id);
    api.authorize('backup:export-import', b.projectId);
    if (b.status !== 'available')
      throw new InvalidStateError(`Invalid backup: Backup status must be available and not ${b.status}.`);
    return exportRecordView(b.service ?? DRIVER, b);
  }

  async importRecord(api: ApiRequest, body: unknown): Promise<Record<string, unknown>> {
    api.authorize('backup:backup-import');
    const input = parseImportRecord(body);
    const live = await this.liveBackends();
    const backend = live.sort()[0];
    if (backend === undefined || !importableFrom(input.backupService))
      throw new TransientError(`Service ${input.backupService.slice(0, 100)} could not be found.`);
    const existing = await this.backups.findById(this.db, input.id, null, { withDeleted: true });
    if (existing && !existing.deleted)
      throw new InvalidInputError(`Invalid backup: Backup ${input.id} already exists.`);
    const now = this.clock.now();
    const backup: StoredBackup = {
      id: input.id,
      projectId: api.ctx.projectId,
      userId: api.ctx.userId,
      volumeId: '00000000-0000-0000-0000-000000000000',
      snapshotId: null,
      parentId: null,
      name: null,
      description: null,
      status: 'creating',
      failReason: null,
      size: input.size,
      objectCount: 0,
      availabilityZone: null,
      container: null,
      host: backend,
      service: DRIVER,
      serviceMetadata: null,
      numDependentBackups: 0,
      metadata: {},
      encryptionKeyId: null,
      restoreVolumeId: null,
      dataTimestamp: now,
      createdAt: now,
      updatedAt: null,
      volumePreviousStatus: null,
      importRecord: input.record,
      deleted: false,
    };
    await this.db.transaction(async (em) => {
      if (existing) await this.backups.purgeDeleted(em, input.id);
      await this.quotas.reserve(em, {
        id: input.id,
        projectId: api.ctx.projectId,
        volumeId: input.id,
        operation: 'backup',
        newSize: null,
        deltas: backupQuotaDeltas(input.size),
        now,
      });
      await this.backups.insert(em, backup);
      await this.outbox.add(
        em,
        this.job(
          backend,
          { name: BACKUP_IMPORT_JOB, data: { backupId: input.id } },
          `${input.id}-${now.getTime()}`,
          input.id,
        ),
      );
    });
    return { backup: backupSummaryView(api.view, backup) };
  }
}
