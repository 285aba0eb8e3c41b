import type { DataSource } from 'typeorm';
import { NotFoundError } from '@osc/errors';
import { VolumeRepository, type StoredVolume } from '@osc/block-storage-persistence';
import type { ApiRequest } from '../http/api-request';

export const volumeNotFound = (id: string): NotFoundError =>
  new NotFoundError('Volume', id, `Volume ${id} could not be found.`);

/** The project a request sees volumes of: every project for an admin, its own otherwise. */
export const volumeScope = (api: ApiRequest): string | null => (api.isAdmin ? null : api.ctx.projectId);

const volumes = new VolumeRepository();

/** The volume `id` as the request may see it; 404 in Cinder's words otherwise. */
export async function loadVolume(db: DataSource, api: ApiRequest, id: string): Promise<StoredVolume> {
  const v = await volumes.findById(db, id, volumeScope(api));
  if (!v) throw volumeNotFound(id);
  return v;
}
