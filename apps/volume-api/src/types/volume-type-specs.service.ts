import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  assertCompatibleSpecs,
  parseSetExtraSpecs,
  parseUpdateExtraSpec,
  visibleExtraSpecs,
} from '@osc/block-storage-domain';
import { NotFoundError } from '@osc/errors';
import { VolumeTypeRepository } from '@osc/block-storage-persistence';
import { DATA_SOURCE } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { assertSpecsChangeable, loadAnyType } from './volume-type-lookup';
import { VolumeTypesService } from './volume-types.service';

/**
 * A type's extra specs (spec 7.3): readers see the specs their role may see, of a type visible to
 * them; writes are admin's, on a type no volume uses, and the merged specs must stay compatible.
 */
@Injectable()
export class VolumeTypeSpecsService {
  private readonly types = new VolumeTypeRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    private readonly volumeTypes: VolumeTypesService,
  ) {}

  async listSpecs(api: ApiRequest, id: string): Promise<Record<string, unknown>> {
    const t = await this.volumeTypes.visibleType(api, id);
    return { extra_specs: visibleExtraSpecs(t.extraSpecs, api.isAdmin) };
  }

  async showSpec(api: ApiRequest, id: string, key: string): Promise<Record<string, unknown>> {
    const t = await this.volumeTypes.visibleType(api, id);
    const specs = visibleExtraSpecs(t.extraSpecs, api.isAdmin);
    if (!(key in specs))
      throw new NotFoundError('Extra spec', key, `Volume Type ${id} has no extra specs with key ${key}.`);
    return { [key]: specs[key] ?? null };
  }

  async setSpecs(api: ApiRequest, id: string, body: unknown): Promise<Record<string, unknown>> {
    api.authorize('volume_extension:types_extra_specs:create');
    const t = await loadAnyType(this.db, id);
    await assertSpecsChangeable(this.db, t.id);
    const specs = parseSetExtraSpecs(body);
    assertCompatibleSpecs({ ...t.extraSpecs, ...specs });
    await this.types.upsertSpecs(this.db, t.id, specs);
    return { extra_specs: specs };
  }

  async updateSpec(
    api: ApiRequest,
    id: string,
    key: string,
    body: unknown,
  ): Promise<Record<string, unknown>> {
    api.authorize('volume_extension:types_extra_specs:update');
    const t = await loadAnyType(this.db, id);
    await assertSpecsChangeable(this.db, t.id);
    const pair = parseUpdateExtraSpec(key, body);
    assertCompatibleSpecs({ ...t.extraSpecs, [pair.key]: pair.value });
    await this.types.upsertSpecs(this.db, t.id, { [pair.key]: pair.value });
    return { [pair.key]: pair.value };
  }

  async deleteSpec(api: ApiRequest, id: string, key: string): Promise<void> {
    api.authorize('volume_extension:types_extra_specs:delete');
    const t = await loadAnyType(this.db, id);
    await assertSpecsChangeable(this.db, t.id);
    if (!(await this.types.deleteSpec(this.db, t.id, key))) {
      throw new NotFoundError('Extra spec', key, `Volume Type ${id} has no extra specs with key ${key}.`);
    }
  }
}
