import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { parseSetDefaultType, supports } from '@osc/block-storage-domain';
import { InvalidInputError, NotFoundError } from '@osc/errors';
import { VolumeTypeRepository } from '@osc/block-storage-persistence';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';

/**
 * Per-project default types (3.62+, spec 7.6): the type a project's volumes get when they name
 * none (VolumeTypesService.defaultType reads it).
 */
@Injectable()
export class DefaultTypesService {
  private readonly types = new VolumeTypeRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  private assertDefaultTypesApi(api: ApiRequest): void {
    if (!supports(api.mv, 'default-types.api'))
      throw new NotFoundError('resource', 'default-types', 'The resource could not be found.');
  }

  async setDefault(api: ApiRequest, projectId: string, body: unknown): Promise<Record<string, unknown>> {
    this.assertDefaultTypesApi(api);
    api.authorize('volume_extension:default_set_or_update');
    const { volumeType } = parseSetDefaultType(body);
    const t = await this.types.findAny(this.db, volumeType);
    if (!t) throw new InvalidInputError(`Invalid volume type: Volume type ${volumeType} could not be found.`);
    await this.types.setDefault(this.db, projectId, t.id, this.clock.now());
    return { default_type: { project_id: projectId, volume_type_id: t.id } };
  }

  async getDefault(api: ApiRequest, projectId: string): Promise<Record<string, unknown>> {
    this.assertDefaultTypesApi(api);
    api.authorize('volume_extension:default_get');
    const d = await this.types.getDefault(this.db, projectId);
    if (!d)
      throw new NotFoundError(
        'Default type',
        projectId,
        `Default type for project ${projectId} could not be found.`,
      );
    return { default_type: { project_id: d.projectId, volume_type_id: d.volumeTypeId } };
  }

  async listDefaults(api: ApiRequest): Promise<Record<string, unknown>> {
    this.assertDefaultTypesApi(api);
    api.authorize('volume_extension:default_get_all');
    const all = await this.types.listDefaults(this.db);
    return { default_types: all.map((d) => ({ project_id: d.projectId, volume_type_id: d.volumeTypeId })) };
  }

  async unsetDefault(api: ApiRequest, projectId: string): Promise<void> {
    this.assertDefaultTypesApi(api);
    api.authorize('volume_extension:default_unset');
    await this.types.unsetDefault(this.db, projectId);
  }
}
