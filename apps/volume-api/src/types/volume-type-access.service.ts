import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { parseTypeAccessAction } from '@osc/block-storage-domain';
import { ConflictError, InvalidInputError, NotFoundError } from '@osc/errors';
import { VolumeTypeRepository } from '@osc/block-storage-persistence';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { loadAnyType } from './volume-type-lookup';

/** Type access (spec 7.5): the projects a private type is granted to; public types have no list. */
@Injectable()
export class VolumeTypeAccessService {
  private readonly types = new VolumeTypeRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async accessAction(api: ApiRequest, id: string, body: unknown): Promise<void> {
    const action = parseTypeAccessAction(body);
    api.authorize(`volume_extension:volume_type_access:${action.action}`);
    const t = await loadAnyType(this.db, id);
    if (t.isPublic)
      throw new InvalidInputError(
        'Invalid volume type: Type access modification is not applicable to public volume type.',
      );
    if (action.action === 'addProjectAccess') {
      if (!(await this.types.addAccess(this.db, t.id, action.project, this.clock.now()))) {
        throw new ConflictError(
          `Volume type access for ${t.id}/${action.project} combination already exists.`,
        );
      }
    } else if (!(await this.types.removeAccess(this.db, t.id, action.project))) {
      throw new NotFoundError(
        'Volume type access',
        `${t.id}/${action.project}`,
        `Volume type access not found for ${t.id}/${action.project} combination.`,
      );
    }
  }

  async listAccess(api: ApiRequest, id: string): Promise<Record<string, unknown>> {
    api.authorize('volume_extension:volume_type_access:get_all_for_type');
    const t = await loadAnyType(this.db, id);
    if (t.isPublic)
      throw new NotFoundError(
        'Volume type access',
        t.id,
        `Volume type access for public volume type ${t.id} could not be found.`,
      );
    const projects = await this.types.listAccess(this.db, t.id);
    return { volume_type_access: projects.map((p) => ({ volume_type_id: t.id, project_id: p })) };
  }
}
