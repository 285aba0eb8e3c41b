import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  BACKUP_FILTER_FIELDS,
  BACKUP_OPERATIONS,
  backupDetailView,
  backupSortKeys,
  backupSummaryView,
  nextPageLink,
  parseActionBody,
  parseBackupResetStatus,
  parseUpdateBackup,
  refusalOf,
  supports,
  type BackupStatus,
} from '@osc/block-storage-domain';
import { BackupRepository } from '@osc/block-storage-persistence';
import { BACKUP_DELETE_JOB } from '@osc/contracts';
import { InvalidStateError, NotFoundError } from '@osc/errors';
import { OutboxWriter } from '@osc/messaging';
import { CLOCK, DATA_SOURCE, OUTBOX_WRITER, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { assertMarkerListed, readProjectList } from '../http/project-list';
import { VOLUME_API_CONFIG, type VolumeApiConfig } from '../volume-api.tokens';
import { backupQueueJob, loadBackup } from './backup-lookup';

const BACKUP_ACTIONS = ['os-reset_status', 'os-force_delete'] as const;

/**
 * Backups (spec 7.9, 8.3): list, show, update, delete and the admin actions (reset-status,
 * force-delete). A delete moves the backup by compare-and-set and commits the worker's job in the
 * same transaction (outbox), on the backup queue of the back end that holds the bytes; the worker
 * releases the quota. Create, restore and the records are their own services (BackupCreateService,
 * BackupRestoreService, BackupRecordsService).
 */
@Injectable()
export class BackupsService {
  private readonly backups = new BackupRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(VOLUME_API_CONFIG) private readonly config: VolumeApiConfig,
  ) {}

  /** `extensions.progress`: show our progress field (the client asked with its header). */
  async list(
    api: ApiRequest,
    detail: boolean,
    extensions: { progress?: boolean } = {},
  ): Promise<Record<string, unknown>> {
    api.authorize('backup:get_all');
    const { projectId, filters, paging, withCount } = readProjectList(api, {
      resource: 'backup',
      maxLimit: this.config.maxLimit,
      sortKeys: backupSortKeys(api.mv),
      compileFilters: (admitted) => {
        const filters: Record<string, string> = {};
        for (const [k, v] of Object.entries(admitted))
          filters[(BACKUP_FILTER_FIELDS as readonly string[]).includes(k) ? k : `?${k}`] = v;
        return filters;
      },
    });
    await assertMarkerListed(paging.marker, (marker) => this.backups.findById(this.db, marker, projectId));
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
    const b = await loadBackup(this.db, api, id);
    api.authorize('backup:get', b.projectId);
    return { backup: backupDetailView(api.view, b, extensions) };
  }

  async update(api: ApiRequest, id: string, body: unknown): Promise<Record<string, unknown>> {
    if (!supports(api.mv, 'backup.update'))
      throw new NotFoundError('resource', id, 'The resource could not be found.');
    const input = parseUpdateBackup(body, api.mv);
    const b = await loadBackup(this.db, api, id);
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
    const b = await loadBackup(this.db, api, id);
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
        backupQueueJob(b.host ?? '', { name: BACKUP_DELETE_JOB, data: { backupId: b.id } }, b.id, b.id),
      );
    });
  }

  async action(api: ApiRequest, id: string, body: unknown): Promise<void> {
    const { action, args } = parseActionBody(body, BACKUP_ACTIONS);
    if (action === 'os-force_delete') return this.remove(api, id, true);
    const status = parseBackupResetStatus(args);
    const b = await loadBackup(this.db, api, id);
    api.authorize('volume_extension:backup_admin_actions:reset_status', b.projectId);
    await this.backups.update(this.db, b.id, { status }, this.clock.now());
  }
}
