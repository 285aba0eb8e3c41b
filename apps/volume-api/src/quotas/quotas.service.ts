import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  absoluteLimits,
  isTrueish,
  parseQuotaUpdate,
  perTypeQuotaKeys,
  queryValue,
  quotaSetView,
  STANDARD_QUOTA_RESOURCES,
  supports,
  DEFAULT_QUOTAS,
} from '@osc/block-storage-domain';
import { QuotaRepository, rowsOf } from '@osc/block-storage-persistence';
import { DATA_SOURCE } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';

/** Quota sets and absolute limits (BS-7.12.3, BS-9.4). */
@Injectable()
export class QuotasService {
  private readonly quotas = new QuotaRepository();

  constructor(@Inject(DATA_SOURCE) private readonly db: DataSource) {}

  private async keys(): Promise<string[]> {
    const types = rowsOf<{ name: string }>(
      await this.db.query(`SELECT name FROM "volume_types" WHERE deleted = false ORDER BY name`),
    );
    return [...STANDARD_QUOTA_RESOURCES, ...types.flatMap((t) => perTypeQuotaKeys(t.name))];
  }

  async limits(api: ApiRequest): Promise<Record<string, unknown>> {
    const asked = queryValue(api.query['project_id']);
    const projectId =
      asked !== undefined && api.isAdmin && supports(api.mv, 'limits.project-id') ? asked : api.ctx.projectId;
    const [limits, usages] = await Promise.all([
      this.quotas.limits(this.db, projectId),
      this.quotas.usages(this.db, projectId),
    ]);
    return { limits: { rate: [], absolute: absoluteLimits(limits, usages) } };
  }

  async show(api: ApiRequest, projectId: string): Promise<Record<string, unknown>> {
    api.authorize('volume_extension:quotas:show', projectId);
    const usage = isTrueish(queryValue(api.query['usage']));
    const [keys, limits, usages] = await Promise.all([
      this.keys(),
      this.quotas.limits(this.db, projectId),
      this.quotas.usages(this.db, projectId),
    ]);
    return quotaSetView(projectId, keys, limits, usage ? usages : null);
  }

  async defaults(projectId: string): Promise<Record<string, unknown>> {
    const keys = await this.keys();
    const classLimits = await this.quotas.limits(this.db, '');
    return quotaSetView(projectId, keys, { ...DEFAULT_QUOTAS, ...classLimits }, null);
  }

  async update(api: ApiRequest, projectId: string, body: unknown): Promise<Record<string, unknown>> {
    api.authorize('volume_extension:quotas:update', projectId);
    const keys = await this.keys();
    const limits = parseQuotaUpdate(body, keys, await this.quotas.usages(this.db, projectId));
    await this.quotas.setLimits(this.db, projectId, limits);
    const set = quotaSetView(projectId, keys, await this.quotas.limits(this.db, projectId), null)[
      'quota_set'
    ] as Record<string, unknown>;
    delete set['id'];
    return { quota_set: set };
  }

  async reset(api: ApiRequest, projectId: string): Promise<void> {
    api.authorize('volume_extension:quotas:delete', projectId);
    await this.quotas.resetLimits(this.db, projectId);
  }
}
