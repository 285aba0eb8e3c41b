import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  ATTACHMENT_SORT_KEYS,
  attachmentDetailView,
  attachmentSummaryView,
  createAttachMode,
  formatMicroversion,
  parseAttachmentAction,
  parseAttachmentCreate,
  parseAttachmentUpdate,
  parsePaging,
  queryValue,
  supports,
  isTrueish,
  VOLUME_OPERATIONS,
  refusalOf,
} from '@osc/block-storage-domain';
import { ConflictError, InvalidStateError, NotFoundError } from '@osc/errors';
import {
  AttachmentRepository,
  VolumeRepository,
  type Queryable,
  type StoredAttachment,
} from '@osc/block-storage-persistence';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { assertMarkerListed } from '../http/project-list';
import { AttachSteps } from './attach-steps';
import { VOLUME_API_CONFIG, type VolumeApiConfig } from '../volume-api.tokens';
import { volumeNotFound } from '../volumes/volume-lookup';

const attachmentNotFound = (id: string): NotFoundError =>
  new NotFoundError(
    'VolumeAttachment',
    id,
    `Volume attachment could not be found with filter: attachment_id = ${id}.`,
  );

/**
 * Volume attachments (BS-8.1.9): the attachments API (3.27: create/list/show/update/delete,
 * 3.44 os-complete, 3.54 mode); the legacy attach actions are AttachActionsService's. Cinder's
 * volume service work (the RPC calls) is synchronous here: the file back end's connection is computed
 * from its pool's `location_info`, so no back-end job is involved. Every change of the volume's
 * status is a compare-and-set on the attach-flow sources of the domain's table, in the
 * transaction that changes the attachment, under a lock of the volume row. The steps both kinds
 * share (connection info, connect, finish detach, the status compare-and-set) are AttachSteps'.
 */
@Injectable()
export class AttachmentsService {
  private readonly attachments = new AttachmentRepository();
  private readonly volumes = new VolumeRepository();
  private readonly steps: AttachSteps;

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(VOLUME_API_CONFIG) private readonly config: VolumeApiConfig,
  ) {
    this.steps = new AttachSteps(db, clock);
  }

  private scope(api: ApiRequest): string | null {
    return api.isAdmin ? null : api.ctx.projectId;
  }

  private requireVersion(api: ApiRequest, feature: 'attachments.api' | 'attachments.complete'): void {
    if (!supports(api.mv, feature)) {
      const v = formatMicroversion(api.mv);
      throw new NotFoundError('version', v, `API version ${v} is not supported on this method.`);
    }
  }

  private async loadAttachment(api: ApiRequest, id: string): Promise<StoredAttachment> {
    const a = await this.attachments.findById(this.db, id, this.scope(api));
    if (!a) throw attachmentNotFound(id);
    return a;
  }

  private async reload(db: Queryable, id: string): Promise<StoredAttachment> {
    const a = await this.attachments.findById(db, id, null);
    if (!a) throw attachmentNotFound(id);
    return a;
  }

  // ---- attachments API ----

  async list(api: ApiRequest, detail: boolean): Promise<Record<string, unknown>> {
    this.requireVersion(api, 'attachments.api');
    const allTenants =
      api.isAdmin &&
      queryValue(api.query['all_tenants']) !== undefined &&
      isTrueish(queryValue(api.query['all_tenants']));
    const paging = parsePaging(api.query, { maxLimit: this.config.maxLimit, sortKeys: ATTACHMENT_SORT_KEYS });
    const projectId = allTenants ? null : api.ctx.projectId;
    await assertMarkerListed(paging.marker, (marker) =>
      this.attachments.findById(this.db, marker, projectId),
    );
    const q = (k: string) => queryValue(api.query[k]);
    const items = await this.attachments.list(
      this.db,
      projectId,
      {
        volumeId: q('volume_id'),
        instanceUuid: q('instance_id'),
        attachStatus: q('attach_status') ?? q('status'),
      },
      paging,
    );
    return { attachments: items.map((a) => (detail ? attachmentDetailView(a) : attachmentSummaryView(a))) };
  }

  async show(api: ApiRequest, id: string): Promise<Record<string, unknown>> {
    this.requireVersion(api, 'attachments.api');
    return { attachment: attachmentDetailView(await this.loadAttachment(api, id)) };
  }

  /**
   * `POST /attachments` (Cinder `attachment_create`): an error-state volume is refused; the volume
   * is reserved (available, or in-use when multiattach; a second attachment of a non-multiattach
   * volume is refused unless it is for the same instance) and a `reserved` attachment recorded;
   * with a connector it is connected at once (`attaching`, connection_info). A connector the back
   * end cannot serve is refused before anything changes.
   */
  async create(api: ApiRequest, body: unknown): Promise<Record<string, unknown>> {
    this.requireVersion(api, 'attachments.api');
    const input = parseAttachmentCreate(body, api.mv);
    const v = await this.volumes.findById(this.db, input.volumeId, this.scope(api));
    if (!v) throw volumeNotFound(input.volumeId);
    api.authorize('volume:attachment_create', v.projectId);
    if (v.status.includes('error')) {
      throw new InvalidStateError(
        `Invalid volume: Volume attachments can not be created if the volume is in an error state. The Volume ${v.id} currently has a status of: ${v.status} `,
      );
    }
    if (v.multiattach && v.status === 'in-use' && v.bootable)
      api.authorize('volume:multiattach_bootable_volume', v.projectId);
    const attachMode = createAttachMode(v.adminMetadata['readonly'], input.mode);
    const connection = input.connector === null ? null : await this.steps.connection(v, input.connector);
    const id = randomUUID();
    await this.db.transaction(async (em) => {
      const now = this.clock.now();
      const locked = await this.steps.lockVolume(em, v.id);
      const reserve = locked.multiattach
        ? VOLUME_OPERATIONS.attachmentReserveMultiattach
        : VOLUME_OPERATIONS.attachmentReserve;
      if (!(await this.volumes.transition(em, v.id, reserve, now))) {
        // LP 1694530: the same instance may reserve again (a move of the instance between hosts).
        const sameInstance =
          input.instanceUuid !== null &&
          ['in-use', 'reserved'].includes(locked.status) &&
          (await this.attachments.listOfVolume(em, v.id)).some((a) => a.instanceUuid === input.instanceUuid);
        if (!sameInstance)
          throw new InvalidStateError(refusalOf(reserve, { id: v.id, status: locked.status }));
      }
      await this.attachments.insert(em, {
        id,
        volumeId: v.id,
        volumeHost: locked.host,
        instanceUuid: input.instanceUuid,
        attachStatus: 'reserved',
        attachMode,
        now,
      });
      if (input.connector !== null && connection !== null) {
        await this.steps.connect(em, locked, await this.reload(em, id), input.connector, connection);
        // Cinder's create saves its own attach_mode over the one the connection recorded.
        await this.attachments.update(em, id, { attachMode }, now);
      }
    });
    return { attachment: attachmentDetailView(await this.reload(this.db, id)) };
  }

  /**
   * `PUT /attachments/{id}` (Cinder `attachment_update`): an error-state volume → 409; two
   * connected attachments of a non-multiattach volume → 409 (duplicate connectors); otherwise the
   * attachment is connected with the connector (`attaching`, connection_info) and so is the volume.
   */
  async update(api: ApiRequest, id: string, body: unknown): Promise<Record<string, unknown>> {
    this.requireVersion(api, 'attachments.api');
    const connector = parseAttachmentUpdate(body);
    const a = await this.loadAttachment(api, id);
    api.authorize('volume:attachment_update', a.projectId);
    const v = await this.volumes.findById(this.db, a.volumeId, null);
    if (!v) throw attachmentNotFound(id);
    if (v.status.includes('error')) {
      throw new ConflictError(
        `Resource conflict: Volume attachments can not be updated if the volume is in an error state. The Volume ${v.id} currently has a status of: ${v.status} `,
      );
    }
    const connection = await this.steps.connection(v, connector);
    await this.db.transaction(async (em) => {
      const locked = await this.steps.lockVolume(em, v.id);
      const all = await this.attachments.listOfVolume(em, v.id);
      if (
        all.length > 1 &&
        !locked.multiattach &&
        all.some((x) => x.connectionInfo !== null && Object.keys(x.connectionInfo).length > 0)
      ) {
        throw new ConflictError(`Resource conflict: duplicate connectors detected on volume ${v.id}`);
      }
      await this.steps.connect(em, locked, await this.reload(em, id), connector, connection);
    });
    return { attachment: attachmentDetailView(await this.reload(this.db, id)) };
  }

  /** `POST /attachments/{id}/action {"os-complete": …}` (3.44): attachment attached, volume in-use. */
  async action(api: ApiRequest, id: string, body: unknown): Promise<void> {
    this.requireVersion(api, 'attachments.complete');
    parseAttachmentAction(body);
    const a = await this.loadAttachment(api, id);
    api.authorize('volume:attachment_complete', a.projectId);
    await this.db.transaction(async (em) => {
      const now = this.clock.now();
      const v = await this.steps.lockVolume(em, a.volumeId);
      if (!(await this.attachments.update(em, id, { attachStatus: 'attached' }, now)))
        throw attachmentNotFound(id);
      await this.steps.setVolumeStatus(em, v, 'in-use', 'attached', 'complete the attachment');
    });
  }

  /**
   * `DELETE /attachments/{id}` (Cinder `attachment_delete` + `finish_detach`): the attachment goes
   * and the volume takes the status its remaining attachments imply. Cinder first asks Nova
   * whether a connected instance still uses the attachment (bug #2004555); there is no compute
   * service here, which Cinder treats as Nova not knowing the instance: the attachment is removed.
   * Answers the remaining attachments of the volume (summary view).
   */
  async remove(api: ApiRequest, id: string): Promise<Record<string, unknown>> {
    this.requireVersion(api, 'attachments.api');
    const a = await this.loadAttachment(api, id);
    api.authorize('volume:attachment_delete', a.projectId);
    const remaining = await this.db.transaction(async (em) => {
      const v = await this.steps.lockVolume(em, a.volumeId);
      return this.steps.finishDetach(em, v, id);
    });
    return { attachments: remaining.map(attachmentSummaryView) };
  }
}
