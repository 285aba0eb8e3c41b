import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  compileSnapshotFilters,
  nextPageLink,
  parseCreateSnapshot,
  parseMetaItemBody,
  parseMetadataBody,
  parseUpdateSnapshot,
  parseSnapshotStatusUpdate,
  snapshotStatusUpdateSources,
  snapshotView,
  SNAPSHOT_SORT_KEYS,
  supports,
  isMigrating,
  SNAPSHOT_OPERATIONS,
  refusalOf,
} from '@osc/block-storage-domain';
import {
  SNAPSHOT_CREATE_JOB,
  SNAPSHOT_DELETE_JOB,
  SNAPSHOT_UNMANAGE_JOB,
  snapshotUnmanageJobId,
} from '@osc/contracts';
import { InvalidInputError, InvalidStateError, NotFoundError } from '@osc/errors';
import { SnapshotRepository, VolumeRepository, type StoredSnapshot } from '@osc/block-storage-persistence';
import { OutboxWriter } from '@osc/messaging';
import { CLOCK, DATA_SOURCE, OUTBOX_WRITER, type Clock } from '@osc/platform';
import { backendJob } from '../jobs/outbox-job';
import type { ApiRequest } from '../http/api-request';
import { metadataItemNotFound, metadataItemView } from '../volumes/metadata-item';
import { assertMarkerListed, readProjectList } from '../http/project-list';
import { VOLUME_API_CONFIG, type VolumeApiConfig } from '../volume-api.tokens';
import { volumeNotFound } from '../volumes/volume-lookup';
import { newSnapshotOf, recordSnapshot } from './snapshot-rows';

const snapshotNotFound = (id: string): NotFoundError =>
  new NotFoundError('Snapshot', id, `Snapshot ${id} could not be found.`);

/** Snapshots (spec 7.8): the back end copies the volume's bytes; quota counts snapshots and gigabytes. */
@Injectable()
export class SnapshotsService {
  private readonly snapshots = new SnapshotRepository();
  private readonly volumes = new VolumeRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(VOLUME_API_CONFIG) private readonly config: VolumeApiConfig,
  ) {}

  private async load(api: ApiRequest, id: string): Promise<StoredSnapshot> {
    const s = await this.snapshots.findById(this.db, id, api.isAdmin ? null : api.ctx.projectId);
    if (!s) throw snapshotNotFound(id);
    return s;
  }

  async create(api: ApiRequest, body: unknown): Promise<Record<string, unknown>> {
    api.authorize('volume:create_snapshot');
    const input = parseCreateSnapshot(body, api.mv);
    // Cinder looks the volume up even when volume_id is null: 404 "Volume None could not be found."
    if (input.volumeId === null) throw volumeNotFound('None');
    const v = await this.volumes.findById(this.db, input.volumeId, api.isAdmin ? null : api.ctx.projectId);
    if (!v) throw volumeNotFound(input.volumeId);
    const migrating = isMigrating(v.migrationStatus);
    if (v.host === null || ['maintenance', 'error'].includes(v.status) || migrating) {
      throw new InvalidStateError(
        `Invalid volume: Volume ${v.id} must be placed on a back end and not be in maintenance, error or migrating to take a snapshot.`,
      );
    }
    const allowInUse = input.force === true || supports(api.mv, 'snapshot.in-use-without-force');
    const allowed = allowInUse ? ['available', 'in-use'] : ['available'];
    if (!allowed.includes(v.status)) {
      throw new InvalidStateError(
        `Invalid volume: Volume ${v.id} status must be ${allowed.join(' or ')}, but current status is: ${v.status}.`,
      );
    }
    const snapshot = newSnapshotOf(api, v, input, this.clock.now());
    await recordSnapshot(
      this.db,
      this.outbox,
      v,
      snapshot,
      backendJob(v.host, {
        id: `snapshot-create-${snapshot.id}`,
        name: SNAPSHOT_CREATE_JOB,
        data: { snapshotId: snapshot.id },
        partitionKey: v.id,
      }),
    );
    return { snapshot: snapshotView(api.view, snapshot, false) };
  }

  async list(api: ApiRequest, detail: boolean): Promise<Record<string, unknown>> {
    api.authorize('volume:get_all_snapshots');
    const { projectId, filters, paging, withCount } = readProjectList(api, {
      resource: 'snapshot',
      maxLimit: this.config.maxLimit,
      sortKeys: SNAPSHOT_SORT_KEYS,
      compileFilters: (admitted) => compileSnapshotFilters(admitted, api.mv),
    });
    await assertMarkerListed(paging.marker, (marker) => this.snapshots.findById(this.db, marker, projectId));
    const page = await this.snapshots.list(this.db, projectId, filters, paging, withCount);
    const out: Record<string, unknown> = {
      snapshots: page.items.map((s) => snapshotView(api.view, s, detail)),
    };
    const last = page.items[page.items.length - 1];
    if (last && page.items.length === paging.limit)
      out['snapshots_links'] = [nextPageLink(api.links, api.collectionPath, api.query, last.id)];
    if (page.count !== null) out['count'] = page.count;
    return out;
  }

  async show(api: ApiRequest, id: string): Promise<Record<string, unknown>> {
    api.authorize('volume:get_snapshot');
    return { snapshot: snapshotView(api.view, await this.load(api, id), true) };
  }

  async update(api: ApiRequest, id: string, body: unknown): Promise<Record<string, unknown>> {
    const input = parseUpdateSnapshot(body);
    const s = await this.load(api, id);
    api.authorize('volume:update_snapshot', s.projectId);
    const set: Record<string, unknown> = {};
    if (input.name !== undefined) set['display_name'] = input.name;
    if (input.description !== undefined) set['display_description'] = input.description;
    await this.snapshots.update(this.db, s.id, set, this.clock.now());
    return { snapshot: snapshotView(api.view, await this.load(api, id), false) };
  }

  /** Cinder: a user delete needs available or error; an admin force-delete accepts any status, `deleting` included. */
  async remove(api: ApiRequest, id: string, force = false): Promise<void> {
    const s = await this.load(api, id);
    api.authorize(
      force ? 'volume_extension:snapshot_admin_actions:force_delete' : 'volume:delete_snapshot',
      s.projectId,
    );
    const operation = force ? SNAPSHOT_OPERATIONS.forceDelete : SNAPSHOT_OPERATIONS.delete;
    if (s.groupSnapshotId !== null)
      throw new InvalidStateError(
        'Invalid snapshot: Snapshots in a group snapshot cannot be deleted individually.',
      );
    await this.db.transaction(async (em) => {
      if (!(await this.snapshots.transition(em, s.id, operation, this.clock.now()))) {
        throw new InvalidStateError(refusalOf(operation, { id: s.id, status: s.status }));
      }
      // A forced delete gets its own job id: an earlier delete job of this snapshot may be kept
      // by the queue as completed or failed, and the handler is idempotent anyway.
      await this.outbox.add(
        em,
        backendJob(s.host, {
          id: force
            ? `snapshot-delete-${s.id}-forced-${this.clock.now().getTime()}`
            : `snapshot-delete-${s.id}`,
          name: SNAPSHOT_DELETE_JOB,
          data: { snapshotId: s.id },
          partitionKey: s.volumeId,
        }),
      );
    });
  }

  async action(api: ApiRequest, id: string, body: unknown): Promise<void> {
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw new InvalidInputError('Malformed request body');
    const keys = Object.keys(body);
    if (keys.length === 1 && keys[0] === 'os-force_delete') return this.remove(api, id, true);
    if (keys.length === 1 && keys[0] === 'os-reset_status') {
      const s = await this.load(api, id);
      api.authorize('volume_extension:snapshot_admin_actions:reset_status', s.projectId);
      const status = (
        (body as Record<string, unknown>)['os-reset_status'] as Record<string, unknown> | null
      )?.['status'];
      if (
        typeof status !== 'string' ||
        !['available', 'error', 'creating', 'deleting', 'error_deleting'].includes(status)
      ) {
        throw new InvalidInputError(
          'Invalid input received: status must be one of available, error, creating, deleting, error_deleting.',
        );
      }
      await this.snapshots.update(this.db, s.id, { status }, this.clock.now());
      return;
    }
    if (keys.length === 1 && keys[0] === 'os-unmanage') return this.unmanage(api, id);
    if (keys.length === 1 && keys[0] === 'os-update_snapshot_status')
      return this.updateStatus(api, id, (body as Record<string, unknown>)['os-update_snapshot_status']);
    throw new InvalidInputError(`There is no such action: ${(keys[0] ?? '(none)').slice(0, 100)}`);
  }

  /**
   * `os-unmanage` (admin): Cinder's delete conditions (available or error, not in a group
   * snapshot); → `unmanaging`, and the owning back end removes the row and releases the quota while
   * the snapshot's file stays where it is.
   */
  private async unmanage(api: ApiRequest, id: string): Promise<void> {
    const s = await this.load(api, id);
    api.authorize('snapshot_extension:snapshot_unmanage', s.projectId);
    const refuse = (): InvalidStateError =>
      new InvalidStateError(refusalOf(SNAPSHOT_OPERATIONS.unmanage, { id: s.id, status: s.status }));
    if (s.groupSnapshotId !== null) throw refuse();
    await this.db.transaction(async (em) => {
      if (!(await this.snapshots.transition(em, s.id, SNAPSHOT_OPERATIONS.unmanage, this.clock.now())))
        throw refuse();
      await this.outbox.add(
        em,
        backendJob(s.host, {
          id: snapshotUnmanageJobId(s.id),
          name: SNAPSHOT_UNMANAGE_JOB,
          data: { snapshotId: s.id },
          partitionKey: s.volumeId,
        }),
      );
    });
  }

  /** `os-update_snapshot_status` (BS-7.13): creating → creating|available|error, deleting → deleting|error_deleting. */
  private async updateStatus(api: ApiRequest, id: string, args: unknown): Promise<void> {
    const s = await this.load(api, id);
    api.authorize('snapshot_extension:snapshot_actions:update_snapshot_status', s.projectId);
    const { status, progress } = parseSnapshotStatusUpdate(args, s.status);
    const set = progress === null ? {} : { progress };
    if (
      !(await this.snapshots.compareAndSetStatus(
        this.db,
        s.id,
        snapshotStatusUpdateSources(status),
        status,
        this.clock.now(),
        set,
      ))
    ) {
      const now = (await this.snapshots.findById(this.db, s.id, null))?.status ?? 'deleted';
      throw new InvalidInputError(
        `Provided snapshot status ${status} not allowed for snapshot with status ${now}.`,
      );
    }
  }

  async getMetadata(api: ApiRequest, id: string): Promise<Record<string, unknown>> {
    return { metadata: { ...(await this.load(api, id)).metadata } };
  }

  async writeMetadata(
    api: ApiRequest,
    id: string,
    body: unknown,
    replace: boolean,
  ): Promise<Record<string, unknown>> {
    const meta = parseMetadataBody(body);
    const s = await this.load(api, id);
    api.authorize('volume:update_snapshot', s.projectId);
    const now = this.clock.now();
    const next = replace
      ? await this.snapshots.metadata.replace(this.db, s.id, meta, now)
      : await this.snapshots.metadata.merge(this.db, s.id, meta, now);
    if (next === null) throw snapshotNotFound(id);
    return { metadata: next };
  }

  async showMetadataItem(api: ApiRequest, id: string, key: string): Promise<Record<string, unknown>> {
    const s = await this.load(api, id);
    return metadataItemView('snapshot', id, s.metadata, key);
  }

  async updateMetadataItem(
    api: ApiRequest,
    id: string,
    key: string,
    body: unknown,
  ): Promise<Record<string, unknown>> {
    const pair = parseMetaItemBody(key, body);
    const s = await this.load(api, id);
    api.authorize('volume:update_snapshot', s.projectId);
    if (
      (await this.snapshots.metadata.merge(this.db, s.id, { [key]: pair.value }, this.clock.now())) === null
    )
      throw snapshotNotFound(id);
    return { meta: { [key]: pair.value } };
  }

  async deleteMetadataItem(api: ApiRequest, id: string, key: string): Promise<void> {
    const s = await this.load(api, id);
    api.authorize('volume:update_snapshot', s.projectId);
    if (!(await this.snapshots.metadata.deleteKey(this.db, s.id, key, this.clock.now()))) {
      throw metadataItemNotFound('snapshot', id, key);
    }
  }
}
