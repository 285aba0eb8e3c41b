import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  formatMicroversion,
  MANAGEABLE_SORT_KEYS,
  manageableView,
  managedIdOf,
  pageManageable,
  parsePaging,
  queryValue,
  supports,
  type ManageableEntry,
  manageRefFile,
  isMultiattachSpec,
  parseManageSnapshot,
  parseManageVolume,
  snapshotView,
  volumeDetailView,
  volumeQuotaDeltas,
  isMigrating,
} from '@osc/block-storage-domain';
import {
  MANAGE_SOURCE_METADATA_KEY,
  SNAPSHOT_MANAGE_JOB,
  VOLUME_MANAGE_JOB,
  snapshotManageJobId,
  volumeManageJobId,
  type SnapshotManageJob,
  type VolumeManageJob,
} from '@osc/contracts';
import { InvalidInputError, InvalidStateError, NotFoundError } from '@osc/errors';
import {
  BackendFileRepository,
  QuotaRepository,
  SnapshotRepository,
  VolumeRepository,
  type StoredVolume,
} from '@osc/block-storage-persistence';
import { OutboxWriter } from '@osc/messaging';
import { CLOCK, DATA_SOURCE, OUTBOX_WRITER, type Clock } from '@osc/platform';
import { backendJob } from '../jobs/outbox-job';
import type { ApiRequest } from '../http/api-request';
import { PoolsService } from '../pools/pools.service';
import { VolumeTypesService } from '../types/volume-types.service';
import { VOLUME_API_CONFIG, type VolumeApiConfig } from '../volume-api.tokens';
import { backendOf } from '../jobs/outbox-job';
import { volumeNotFound } from '../volumes/volume-lookup';
import { newSnapshotOf, recordSnapshot } from '../snapshots/snapshot-rows';

/**
 * Manage: an admin hands an object already on a back end (for the file back end, a file
 * `volume-<uuid>` / `snapshot-<uuid>` in its directory) to this service. The API records the new
 * row and the back end's job in one transaction and answers 202; the back end that owns the
 * directory checks the reference, renames the file to the new id and settles the status.
 *
 * Quota: a managed volume's size is known only once its back end has looked at the file. The API
 * charges the volume count (and the per-type count) at once, so a project over its volume quota
 * gets 413 as for a create; the back end charges the gigabytes of the size it finds when it
 * adopts the file, in the transaction that makes the volume available. If the reference is bad or
 * the gigabytes do not fit, the volume ends in `error_managing` and gives its count back (it
 * consumes no quota, as in Cinder). A managed snapshot is charged like a new snapshot of its
 * volume (the volume's size) at once, and the back end corrects the gigabytes to the file's size.
 */
@Injectable()
export class ManageService {
  private readonly volumes = new VolumeRepository();
  private readonly snapshots = new SnapshotRepository();
  private readonly quotas = new QuotaRepository();
  private readonly files = new BackendFileRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(VOLUME_API_CONFIG) private readonly config: VolumeApiConfig,
    private readonly types: VolumeTypesService,
    private readonly livePools: PoolsService,
  ) {}

  /**
   * The pool a manage targets: `host@backend#pool` names a pool, `host@backend` the back end's
   * (first) pool. A back end that is unknown or not reporting is Cinder's 400.
   */
  private async poolFor(host: string | null, cluster: string | null) {
    const pools = await this.livePools.fresh();
    // Clusters are not used by this service: a named cluster never has a service.
    const pool =
      host === null
        ? undefined
        : host.includes('#')
          ? pools.find((p) => p.name === host)
          : pools.filter((p) => p.backend === host).sort((a, b) => (a.name < b.name ? -1 : 1))[0];
    if (!pool)
      throw new InvalidInputError(
        host !== null ? `Host '${host}' not found` : `Cluster '${cluster ?? ''}' not found`,
      );
    await this.assertEnabled(pool.backend);
    return pool;
  }

  /** Cinder refuses to manage on a cinder-volume service an operator disabled (400). */
  private async assertEnabled(backend: string): Promise<void> {
    if ((await this.livePools.disabledBackends()).has(backend))
      throw new InvalidInputError('Service is unavailable at this time.');
  }

  /**
   * `GET /manageable_volumes[/detail]` (3.8; also v2 `/os-volume-manage`): the `volume-<uuid>`
   * files of the back end named by `host` (as it last reported them), each safe to manage unless
   * a live volume has its id.
   */
  async listVolumes(api: ApiRequest, detail: boolean): Promise<Record<string, unknown>> {
    const { backend, paging } = await this.listQuery(api, 'volume_extension:list_manageable');
    const files = await this.backendFiles(backend, 'volume');
    const live = await this.files.liveVolumes(
      this.db,
      files.map((f) => f.id),
    );
    const entries: ManageableEntry[] = files.map((f) => manageableFile(f, live.has(f.id)));
    return { 'manageable-volumes': pageManageable(entries, paging).map((e) => manageableView(e, detail)) };
  }

  /**
   * `GET /manageable_snapshots[/detail]` (3.8; also v2 `/os-snapshot-manage`): the
   * `snapshot-<uuid>` files of the back end, with the volume a (now unmanaged) snapshot was of.
   */
  async listSnapshots(api: ApiRequest, detail: boolean): Promise<Record<string, unknown>> {
    const { backend, paging } = await this.listQuery(api, 'snapshot_extension:list_manageable');
    const files = await this.backendFiles(backend, 'snapshot');
    const rows = await this.files.snapshotsOf(
      this.db,
      files.map((f) => f.id),
    );
    const entries: ManageableEntry[] = files.map((f) => {
      const row = rows.get(f.id);
      const sourceReference: Record<string, string> = row ? { 'source-name': `volume-${row.volumeId}` } : {};
      return { ...manageableFile(f, row?.live === true), sourceReference };
    });
    return { 'manageable-snapshots': pageManageable(entries, paging).map((e) => manageableView(e, detail)) };
  }

  /** The `<kind>-<uuid>` files the back end last reported, with the id each name carries. */
  private async backendFiles(
    backend: string,
    kind: 'volume' | 'snapshot',
  ): Promise<{ name: string; bytes: number; id: string }[]> {
    const prefix = `${kind}-`;
    return (await this.files.list(this.db, backend, prefix))
      .filter((f) => managedIdOf(f.name, kind) === f.name.slice(prefix.length))
      .map((f) => ({ name: f.name, bytes: f.bytes, id: f.name.slice(prefix.length) }));
  }

  /** The admin check, `host` (or `cluster`, 3.17) → the back end, and paging of a manageable list. */
  private async listQuery(api: ApiRequest, rule: string) {
    if (api.links.apiPrefix === 'v3' && !supports(api.mv, 'manageable.lists')) {
      throw new NotFoundError(
        'version',
        formatMicroversion(api.mv),
        `API version ${formatMicroversion(api.mv)} is not supported on this method.`,
      );
    }
    api.authorize(rule);
    const withCluster = supports(api.mv, 'manage.cluster');
    const host = queryValue(api.query['host']) || null;
    const cluster = withCluster ? queryValue(api.query['cluster']) || null : null;
    if ((host === null) === (cluster === null)) {
      throw new InvalidInputError(
        `Invalid input received: ${withCluster ? 'One and only one of cluster and host must be set.' : 'Host field is missing.'}`,
      );
    }
    const paging = parsePaging(api.query, { maxLimit: this.config.maxLimit, sortKeys: MANAGEABLE_SORT_KEYS });
    const backend = host?.split('#', 1)[0] ?? '';
    if (host === null || !(await this.livePools.fresh()).some((p) => p.backend === backend)) {
      throw new NotFoundError(
        'Service',
        host ?? cluster ?? '',
        `Service ${host ?? cluster ?? ''} could not be found.`,
      );
    }
    return { backend, paging };
  }

  async manageVolume(api: ApiRequest, body: unknown): Promise<Record<string, unknown>> {
    api.authorize('volume_extension:volume_manage');
    const input = parseManageVolume(body, api.mv);
    const file = manageRefFile(input.ref, 'volume');
    // Cinder refuses at once a reference naming a volume it already manages.
    const existing = file === null ? null : managedIdOf(file, 'volume');
    if (existing !== null && (await this.volumes.findById(this.db, existing, null))) {
      throw new InvalidStateError(
        'Invalid volume: Unable to manage existing volume. The volume is already managed',
      );
    }
    const type =
      input.volumeType !== null
        ? await this.types.visibleType(api, input.volumeType)
        : await this.types.defaultType(api.ctx.projectId);
    if ((await this.types.encryptionOf(type.id)) !== null) {
      throw new InvalidInputError(
        'Invalid input received: Managing a volume of an encrypted volume type is not supported.',
      );
    }
    const pool = await this.poolFor(input.host, input.cluster);
    const zone = input.availabilityZone ?? pool.availabilityZone;
    const zones = await this.livePools.knownZones();
    if (!zones.has(zone))
      throw new InvalidInputError(
        `Invalid input received: Availability zone '${zone.slice(0, 100)}' is invalid.`,
      );

    const now = this.clock.now();
    const id = randomUUID();
    const volume: StoredVolume = {
      id,
      projectId: api.ctx.projectId,
      userId: api.ctx.userId,
      name: input.name,
      description: input.description,
      size: 0,
      status: 'managing',
      availabilityZone: zone,
      volumeTypeId: type.id,
      volumeTypeName: type.name,
      snapshotId: null,
      sourceVolid: null,
      metadata: input.metadata,
      // Hidden admin key: a back end restarted mid-manage adopts the same file again.
      adminMetadata: { [MANAGE_SOURCE_METADATA_KEY]: file ?? '' },
      imageMetadata: null,
      bootable: input.bootable,
      encrypted: false,
      encryptionKeyId: null,
      multiattach: isMultiattachSpec(type.extraSpecs),
      host: pool.name,
      clusterName: null,
      providerId: null,
      serviceUuid: null,
      sharedTargets: false,
      migrationStatus: null,
      nameId: null,
      replicationStatus: 'disabled',
      consistencygroupId: null,
      groupId: null,
      consumesQuota: true,
      attachments: [],
      attachStatus: 'detached',
      createdAt: now,
      updatedAt: null,
      errorReason: null,
      deleted: false,
    };
    const job: VolumeManageJob = { volumeId: id, source: file ?? '' };
    await this.db.transaction(async (em) => {
      // The count now (413 when over); the gigabytes when the back end knows the size.
      await this.quotas.apply(em, api.ctx.projectId, volumeQuotaDeltas(0, type.name));
      await this.volumes.insert(em, volume);
      await this.outbox.add(
        em,
        backendJob(pool.backend, {
          id: volumeManageJobId(id),
          name: VOLUME_MANAGE_JOB,
          data: job,
          partitionKey: id,
        }),
      );
    });
    return { volume: volumeDetailView(api.view, volume, 'create') };
  }

  async manageSnapshot(api: ApiRequest, body: unknown): Promise<Record<string, unknown>> {
    api.authorize('snapshot_extension:snapshot_manage');
    const input = parseManageSnapshot(body);
    const v = await this.volumes.findById(this.db, input.volumeId, null);
    if (!v) throw volumeNotFound(input.volumeId);
    const file = manageRefFile(input.ref, 'snapshot');
    const existing = file === null ? null : managedIdOf(file, 'snapshot');
    if (existing !== null && (await this.snapshots.findById(this.db, existing, null))) {
      throw new InvalidStateError(
        'Invalid snapshot: Unable to manage existing snapshot. The snapshot is already managed',
      );
    }
    // Cinder: the volume's service must be up; the snapshot is created as a forced one.
    const pools = await this.livePools.fresh();
    if (v.host === null || !pools.some((p) => p.backend === backendOf(v.host ?? '')))
      throw new InvalidInputError('Service is unavailable at this time.');
    await this.assertEnabled(backendOf(v.host));
    if (v.status === 'maintenance')
      throw new InvalidStateError('Invalid volume: The volume cannot be updated during maintenance.');
    if (isMigrating(v.migrationStatus)) {
      throw new InvalidStateError('Invalid volume: Snapshot cannot be created while volume is migrating.');
    }
    // As in Cinder, the managed snapshot (and its quota) belongs to the caller's project.
    const snapshot = newSnapshotOf(api, v, input, this.clock.now(), file ?? '');
    const job: SnapshotManageJob = { snapshotId: snapshot.id, source: file ?? '' };
    await recordSnapshot(
      this.db,
      this.outbox,
      v,
      snapshot,
      backendJob(v.host, {
        id: snapshotManageJobId(snapshot.id),
        name: SNAPSHOT_MANAGE_JOB,
        data: job,
        partitionKey: v.id,
      }),
    );
    return { snapshot: snapshotView(api.view, snapshot, false) };
  }
}

const GIB = 1024 ** 3;
/** Size in GiB of a file of `bytes`, rounded up (at least 1), as the back end sizes a managed volume. */
const gib = (bytes: number): number => Math.max(1, Math.ceil(bytes / GIB));

/** A manageable file's entry: safe to manage unless a live volume (snapshot) already has its id. */
const manageableFile = (
  f: { name: string; bytes: number; id: string },
  managed: boolean,
): ManageableEntry => ({
  reference: { 'source-name': f.name },
  size: gib(f.bytes),
  safeToManage: !managed,
  reasonNotSafe: managed ? 'already managed' : null,
  cinderId: managed ? f.id : null,
});
