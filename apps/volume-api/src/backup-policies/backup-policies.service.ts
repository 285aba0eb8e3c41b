import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  isTrueish,
  nextBackupRun,
  nextPageLink,
  parseBackupSchedule,
  parseCreateBackupPolicy,
  parsePaging,
  parseUpdateBackupPolicy,
  queryValue,
} from '@osc/block-storage-domain';
import {
  BackupPolicyRepository,
  type BackupPolicyChanges,
  type StoredBackupPolicy,
  VolumeRepository,
  VolumeTypeRepository,
} from '@osc/block-storage-persistence';
import { NotFoundError } from '@osc/errors';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { VOLUME_API_CONFIG, type VolumeApiConfig } from '../volume-api.tokens';

const policyNotFound = (id: string): NotFoundError =>
  new NotFoundError('Backup policy', id, `Backup policy ${id} could not be found.`);

const iso = (d: Date | null): string | null =>
  d === null
    ? null
    : d
        .toISOString()
        .replace('Z', '')
        .replace(/\.(\d{3})$/, '.$1000');

/** The wire form of a policy (ours; timestamps in the style of Cinder's other resources). */
export function backupPolicyView(p: StoredBackupPolicy): Record<string, unknown> {
  return {
    id: p.id,
    project_id: p.projectId,
    user_id: p.userId,
    name: p.name,
    description: p.description,
    volume_id: p.volumeId,
    volume_type_id: p.volumeTypeId,
    schedule: p.schedule,
    retention: p.retention,
    full_every: p.fullEvery,
    skip_unchanged: p.skipUnchanged,
    enabled: p.enabled,
    next_run_at: p.enabled ? iso(p.nextRunAt) : null,
    last_run_at: iso(p.lastRunAt),
    last_run: p.lastRun,
    last_error: p.lastError,
    last_error_at: iso(p.lastErrorAt),
    created_at: p.createdAt,
    updated_at: p.updatedAt,
  };
}

/**
 * Backup policies (ours, issue 21 item 3; documented in docs/backup-policies.md): a cron schedule
 * backing up a volume, or the project's volumes of a type, with retention. Same authentication,
 * policy rules (`backup_policy:*`) and error bodies as the rest of the Cinder API; no microversion.
 * The cron-scheduler fires them; this service only keeps the rows.
 */
@Injectable()
export class BackupPoliciesService {
  private readonly policies = new BackupPolicyRepository();
  private readonly volumes = new VolumeRepository();
  private readonly types = new VolumeTypeRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(VOLUME_API_CONFIG) private readonly config: VolumeApiConfig,
  ) {}

  private async load(api: ApiRequest, id: string): Promise<StoredBackupPolicy> {
    const p = await this.policies.findById(this.db, id, api.isAdmin ? null : api.ctx.projectId);
    if (!p) throw policyNotFound(id);
    return p;
  }

  private async reload(id: string): Promise<StoredBackupPolicy> {
    const p = await this.policies.findById(this.db, id, null);
    if (!p) throw policyNotFound(id);
    return p;
  }

  async create(api: ApiRequest, body: unknown): Promise<Record<string, unknown>> {
    api.authorize('backup_policy:create');
    const input = parseCreateBackupPolicy(body);
    const scope = api.isAdmin ? null : api.ctx.projectId;
    let projectId = api.ctx.projectId;
    if (input.volumeId !== null) {
      const v = await this.volumes.findById(this.db, input.volumeId, scope);
      if (!v)
        throw new NotFoundError('Volume', input.volumeId, `Volume ${input.volumeId} could not be found.`);
      // An admin's policy on another project's volume backs it up in that project (its quota, its backups).
      projectId = v.projectId;
    } else if (input.volumeTypeId !== null) {
      const t = await this.types.findVisible(this.db, input.volumeTypeId, {
        projectId: api.ctx.projectId,
        isAdmin: api.isAdmin,
      });
      if (!t)
        throw new NotFoundError(
          'Volume type',
          input.volumeTypeId,
          `Volume type with id ${input.volumeTypeId} could not be found.`,
        );
    }
    const now = this.clock.now();
    const id = randomUUID();
    await this.policies.insert(
      this.db,
      {
        id,
        projectId,
        userId: api.ctx.userId,
        name: input.name,
        description: input.description,
        volumeId: input.volumeId,
        volumeTypeId: input.volumeTypeId,
        schedule: input.schedule.schedule,
        retention: input.retention,
        fullEvery: input.fullEvery,
        skipUnchanged: input.skipUnchanged,
        enabled: input.enabled,
        nextRunAt: nextBackupRun(input.schedule, now),
      },
      now,
    );
    return { backup_policy: backupPolicyView(await this.reload(id)) };
  }

  async list(api: ApiRequest): Promise<Record<string, unknown>> {
    api.authorize('backup_policy:get_all');
    const allTenants = api.isAdmin && isTrueish(queryValue(api.query['all_tenants']));
    const projectId = allTenants ? null : api.ctx.projectId;
    const paging = parsePaging(api.query, { maxLimit: this.config.maxLimit, sortKeys: ['created_at'] });
    let marker: StoredBackupPolicy | null = null;
    if (paging.marker !== null) {
      marker = await this.policies.findById(this.db, paging.marker, projectId);
      if (!marker)
        throw new NotFoundError('Marker', paging.marker, `Marker ${paging.marker} could not be found.`);
    }
    const items = await this.policies.list(this.db, projectId, paging.limit, marker);
    const out: Record<string, unknown> = { backup_policies: items.map(backupPolicyView) };
    const last = items[items.length - 1];
    if (last && items.length === paging.limit)
      out['backup_policies_links'] = [nextPageLink(api.links, api.collectionPath, api.query, last.id)];
    return out;
  }

  async show(api: ApiRequest, id: string): Promise<Record<string, unknown>> {
    const p = await this.load(api, id);
    api.authorize('backup_policy:get', p.projectId);
    return { backup_policy: backupPolicyView(p) };
  }

  /** A new schedule, or enabling again, moves the next run to the schedule's first after now. */
  async update(api: ApiRequest, id: string, body: unknown): Promise<Record<string, unknown>> {
    const p = await this.load(api, id);
    api.authorize('backup_policy:update', p.projectId);
    const u = parseUpdateBackupPolicy(body);
    const changes: { -readonly [K in keyof BackupPolicyChanges]: BackupPolicyChanges[K] } = {
      name: u.name,
      description: u.description,
      schedule: u.schedule?.schedule,
      retention: u.retention,
      fullEvery: u.fullEvery,
      skipUnchanged: u.skipUnchanged,
      enabled: u.enabled,
    };
    const now = this.clock.now();
    if (u.schedule !== undefined || (u.enabled === true && !p.enabled)) {
      changes.nextRunAt = nextBackupRun(u.schedule ?? parseBackupSchedule(p.schedule), now);
    }
    if (!(await this.policies.update(this.db, id, changes, now))) throw policyNotFound(id);
    return { backup_policy: backupPolicyView(await this.reload(id)) };
  }

  /** Deleting waits for a firing in progress; the policy's backups stay (they are ordinary backups). */
  async remove(api: ApiRequest, id: string): Promise<void> {
    const p = await this.load(api, id);
    api.authorize('backup_policy:delete', p.projectId);
    if (!(await this.policies.delete(this.db, id))) throw policyNotFound(id);
  }
}
