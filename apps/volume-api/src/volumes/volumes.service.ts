import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  compileVolumeFilters,
  isTrueish,
  nextPageLink,
  parseUpdateVolume,
  queryValue,
  supports,
  VOLUME_SORT_KEYS,
  volumeDetailPlan,
  volumeDetailView,
  volumeSummaryView,
} from '@osc/block-storage-domain';
import { InvalidInputError, NotFoundError } from '@osc/errors';
import { VolumeRepository } from '@osc/block-storage-persistence';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { assertMarkerListed, readProjectList } from '../http/project-list';
import { VOLUME_API_CONFIG, type VolumeApiConfig } from '../volume-api.tokens';
import { loadVolume } from './volume-lookup';

/**
 * Reading volumes (BS-7.7.1, 7.7.2, 7.7.10) and changing their name, description and metadata
 * with PUT. Creation, the lifecycle actions, attachments, migration and metadata items have their
 * own services in this folder.
 */
@Injectable()
export class VolumesService {
  private readonly volumes = new VolumeRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(VOLUME_API_CONFIG) private readonly config: VolumeApiConfig,
  ) {}

  /**
   * The detail list as JSON text, rendered by the database (volumeDetailPlan): the same body as
   * `list(api, true)` without parsing and re-serialising ~130 KB pages.
   */
  async detailJson(api: ApiRequest): Promise<string> {
    const q = this.listQuery(api);
    const projectId = await this.checkedListProject(q);
    const page = await this.volumes.listDetailJson(
      this.db,
      { projectId, hideMigrationTargets: !api.isAdmin },
      q.filters,
      q.paging,
      q.withCount,
      volumeDetailPlan(api.view),
    );
    let out = `{"volumes":[${page.items}]`;
    if (page.lastId !== null && page.size === q.paging.limit)
      out += `,"volumes_links":${JSON.stringify([nextPageLink(api.links, api.collectionPath, api.query, page.lastId)])}`;
    if (page.count !== null) out += `,"count":${page.count}`;
    return `${out}}`;
  }

  /** The one reading of a list request (policy, all_tenants, admitted filters, paging, with_count) both list routes use. */
  private listQuery(api: ApiRequest) {
    api.authorize('volume:get_all');
    return readProjectList(api, {
      resource: 'volume',
      maxLimit: this.config.maxLimit,
      sortKeys: VOLUME_SORT_KEYS,
      compileFilters: (admitted) => compileVolumeFilters(admitted, api.mv),
    });
  }

  private async checkedListProject(q: {
    projectId: string | null;
    paging: { marker: string | null };
  }): Promise<string | null> {
    await assertMarkerListed(q.paging.marker, (id) => this.volumes.findById(this.db, id, q.projectId));
    return q.projectId;
  }

  async list(api: ApiRequest, detail: boolean): Promise<Record<string, unknown>> {
    const q = this.listQuery(api);
    const projectId = await this.checkedListProject(q);
    const page = await this.volumes.list(
      this.db,
      { projectId, hideMigrationTargets: !api.isAdmin },
      q.filters,
      q.paging,
      q.withCount,
    );
    const out: Record<string, unknown> = {
      volumes: page.items.map((v) =>
        detail ? volumeDetailView(api.view, v, 'list') : volumeSummaryView(api.view, v),
      ),
    };
    const last = page.items[page.items.length - 1];
    if (last && page.items.length === q.paging.limit)
      out['volumes_links'] = [nextPageLink(api.links, api.collectionPath, api.query, last.id)];
    if (page.count !== null) out['count'] = page.count;
    return out;
  }

  async summary(api: ApiRequest): Promise<Record<string, unknown>> {
    if (!supports(api.mv, 'volume.summary'))
      throw new NotFoundError('resource', 'summary', 'The resource could not be found.');
    api.authorize('volume:get_all');
    const allTenants = api.isAdmin && isTrueish(queryValue(api.query['all_tenants']));
    const s = await this.volumes.summary(this.db, allTenants ? null : api.ctx.projectId);
    const out: Record<string, unknown> = { total_count: s.totalCount, total_size: s.totalSize };
    if (supports(api.mv, 'volume.summary-metadata')) out['metadata'] = s.metadata;
    return { 'volume-summary': out };
  }

  async show(api: ApiRequest, id: string): Promise<Record<string, unknown>> {
    api.authorize('volume:get');
    return { volume: volumeDetailView(api.view, await loadVolume(this.db, api, id), 'show') };
  }

  async update(api: ApiRequest, id: string, body: unknown): Promise<Record<string, unknown>> {
    const input = parseUpdateVolume(body, api.mv);
    const v = await loadVolume(this.db, api, id);
    api.authorize('volume:update', v.projectId);
    if (v.status === 'maintenance')
      throw new InvalidInputError(`Invalid volume: Volume ${id} is in maintenance.`);
    const set: Record<string, unknown> = {};
    if (input.name !== undefined) set['display_name'] = input.name;
    if (input.description !== undefined) set['display_description'] = input.description;
    if (input.metadata !== undefined) set['metadata'] = input.metadata;
    await this.volumes.update(this.db, id, set, this.clock.now());
    return { volume: volumeDetailView(api.view, await loadVolume(this.db, api, id), 'update') };
  }
}
