import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { parseMetadataBody, parseMetaItemBody } from '@osc/block-storage-domain';
import {} from '@osc/errors';
import { VolumeRepository } from '@osc/block-storage-persistence';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { metadataItemNotFound, metadataItemView } from './metadata-item';
import { loadVolume, volumeNotFound } from './volume-lookup';

/**
 * Volume metadata (BS-7.7.13): every write is one UPDATE with the merge done by jsonb operators
 * (MetadataWriter), so concurrent writers of different keys never lose each other's keys, and a
 * PUT guarded by If-Match is refused when the metadata changed after its ETag was checked.
 */
@Injectable()
export class VolumeMetadataService {
  private readonly volumes = new VolumeRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async getMetadata(api: ApiRequest, id: string): Promise<{ body: Record<string, unknown>; etag: string }> {
    const v = await loadVolume(this.db, api, id);
    api.authorize('volume:get_volume_metadata', v.projectId);
    return { body: { metadata: { ...v.metadata } }, etag: metadataEtag(v.metadata) };
  }

  /** POST: adds or overwrites the given keys, the others kept as they are now (one UPDATE). */
  async mergeMetadata(api: ApiRequest, id: string, body: unknown): Promise<Record<string, unknown>> {
    const meta = parseMetadataBody(body);
    const v = await loadVolume(this.db, api, id);
    api.authorize('volume:create_volume_metadata', v.projectId);
    const next = await this.volumes.metadata.merge(this.db, v.id, meta, this.clock.now());
    if (next === null) throw volumeNotFound(id);
    return { metadata: next };
  }

  /**
   * PUT: replaces the whole metadata. `ifMatch` (the ETags of an If-Match header, from 3.15) is
   * checked against the metadata read here, before the body as Cinder does, and the UPDATE
   * requires that same metadata, so a change in between refuses the write too; null means 412
   * Precondition Failed.
   */
  async replaceMetadata(
    api: ApiRequest,
    id: string,
    body: unknown,
    ifMatch: readonly string[] | null,
  ): Promise<Record<string, unknown> | null> {
    let expected: Record<string, string> | null = null;
    if (ifMatch !== null) {
      const current = await loadVolume(this.db, api, id);
      api.authorize('volume:get_volume_metadata', current.projectId);
      if (!ifMatch.includes(metadataEtag(current.metadata)) && !ifMatch.includes('*')) return null;
      expected = ifMatch.includes('*') ? null : current.metadata;
    }
    const meta = parseMetadataBody(body);
    const v = await loadVolume(this.db, api, id);
    api.authorize('volume:update_volume_metadata', v.projectId);
    const next = await this.volumes.metadata.replace(this.db, v.id, meta, this.clock.now(), expected);
    if (next !== null) return { metadata: next };
    if (expected !== null) return null;
    throw volumeNotFound(id);
  }

  async showMetadataItem(api: ApiRequest, id: string, key: string): Promise<Record<string, unknown>> {
    const v = await loadVolume(this.db, api, id);
    api.authorize('volume:get_volume_metadata', v.projectId);
    return metadataItemView('volume', id, v.metadata, key);
  }

  async updateMetadataItem(
    api: ApiRequest,
    id: string,
    key: string,
    body: unknown,
  ): Promise<Record<string, unknown>> {
    const pair = parseMetaItemBody(key, body);
    const v = await loadVolume(this.db, api, id);
    api.authorize('volume:update_volume_metadata', v.projectId);
    if ((await this.volumes.metadata.merge(this.db, v.id, { [key]: pair.value }, this.clock.now())) === null)
      throw volumeNotFound(id);
    return { meta: { [key]: pair.value } };
  }

  async deleteMetadataItem(api: ApiRequest, id: string, key: string): Promise<void> {
    const v = await loadVolume(this.db, api, id);
    api.authorize('volume:delete_volume_metadata', v.projectId);
    if (!(await this.volumes.metadata.deleteKey(this.db, v.id, key, this.clock.now()))) {
      throw metadataItemNotFound('volume', id, key);
    }
  }
}

/** Cinder's metadata ETag (3.15): the MD5 of the `{"metadata": …}` body. */
const metadataEtag = (metadata: Readonly<Record<string, string>>): string =>
  createHash('md5')
    .update(JSON.stringify({ metadata: { ...metadata } }))
    .digest('hex');
