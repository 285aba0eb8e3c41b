import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  DEFAULT_QUOTAS,
  parseQuotaClassUpdate,
  perTypeQuotaKeys,
  quotaClassSetView,
  STANDARD_QUOTA_RESOURCES,
} from '@osc/block-storage-domain';
import { InvalidInputError } from '@osc/errors';
import { rowsOf } from '@osc/block-storage-persistence';
import { DATA_SOURCE } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';

/**
 * Quota classes (`/os-quota-class-sets/{class}`, admin). Class `default` is what every project
 * falls back to (the quota repository reads it); other classes are stored and shown.
 */
@Injectable()
export class QuotaClassesService {
  constructor(@Inject(DATA_SOURCE) private readonly db: DataSource) {}

  private async keys(): Promise<string[]> {
    const types = rowsOf<{ name: string }>(
      await this.db.query(`SELECT name FROM "volume_types" WHERE deleted = false ORDER BY name`),
    );
    return [...STANDARD_QUOTA_RESOURCES, ...types.flatMap((t) => perTypeQuotaKeys(t.name))];
  }

  private async limits(className: string): Promise<Record<string, number>> {
    const rows = rowsOf<{ resource: string; hard_limit: number }>(
      await this.db.query(`SELECT resource, hard_limit FROM "quota_class_limits" WHERE class_name = $1`, [
        className,
      ]),
    );
    const out: Record<string, number> = { ...DEFAULT_QUOTAS };
    for (const r of rows) out[r.resource] = Number(r.hard_limit);
    return out;
  }

  async show(api: ApiRequest, className: string): Promise<Record<string, unknown>> {
    api.authorize('volume_extension:quota_classes:get');
    return quotaClassSetView(className, await this.keys(), await this.limits(className), true);
  }

  async update(api: ApiRequest, className: string, body: unknown): Promise<Record<string, unknown>> {
    api.authorize('volume_extension:quota_classes:update');
    if (className.length < 1 || className.length > 255)
      throw new InvalidInputError(
        'Invalid input received: quota_class_name has a length outside 1 to 255 characters.',
      );
    const keys = await this.keys();
    const set = parseQuotaClassUpdate(body, keys);
    await this.db.transaction(async (em) => {
      for (const [resource, limit] of Object.entries(set)) {
        await em.query(
          `INSERT INTO "quota_class_limits" (class_name, resource, hard_limit) VALUES ($1, $2, $3) ON CONFLICT (class_name, resource) DO UPDATE SET hard_limit = EXCLUDED.hard_limit`,
          [className, resource, limit],
        );
      }
    });
    return quotaClassSetView(className, keys, await this.limits(className), false);
  }
}
