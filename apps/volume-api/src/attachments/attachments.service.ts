import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  ATTACHMENT_SORT_KEYS,
  attachmentDetailView,
  attachmentSummaryView,
  createAttachMode,
  formatMicroversion,
  parseAttachArgs,
  parseAttachmentAction,
  parseAttachmentCreate,
  parseAttachmentUpdate,
  parseConnectorArg,
  parseDetachArgs,
  parseForceDetachAttachmentId,
  parsePaging,
  queryValue,
  supports,
  isTrueish,
  VOLUME_OPERATIONS,
  refusalOf,
} from '@osc/block-storage-domain';
import { ConflictError, InvalidInputError, InvalidStateError, NotFoundError } from '@osc/errors';
import {
  AttachmentRepository,
  VolumeRepository,
  type Queryable,
  type StoredAttachment,
  type StoredVolume,
} from '@osc/block-storage-persistence';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { AttachSteps } from './attach-steps';
import { VOLUME_API_CONFIG, type VolumeApiConfig } from '../volume-api.tokens';

const volumeNotFound = (id: string): NotFoundError =>
  new NotFoundError('Volume', id, `Volume ${id} could not be found.`);
const attachmentNotFound = (id: string): NotFoundError =>
  new NotFoundError(
    'VolumeAttachment',
    id,
    `Volume attachment could not be found with filter: attachment_id = ${id}.`,
  );

/** Cinder's ConflictNovaUsingAttachment (bug #2004555): the attachment to remove cannot be told apart. */
const novaConflict = (instance: string): ConflictError =>
  new ConflictError(`Detach volume from instance ${instance} using the Compute API`);

/** Cinder's `sanitize_hostname`: the host name an attachment records. */
const sanitizeHostname = (host: string): string =>
  host
    .replace(/[^\x20-\x7e]/g, '')
    .replace(/[ _]/g, '-')
    .replace(/[^\w.-]+/g, '')
    .toLowerCase()
    .replace(/^[.-]+|[.-]+$/g, '')
    .slice(0, 63);

/**
 * Volume attachments (BS-8.1.9): the attachments API (3.27: create/list/show/update/delete,
 * 3.44 os-complete, 3.54 mode) and the legacy attach actions (`os-attach`, `os-detach`,
 * `os-initialize_connection`, `os-terminate_connection`, `os-force_detach`). Cinder's volume
 * service work (the RPC calls) is synchronous here: the file back end's connection is computed
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

  /** The volume row locked for the rest of the transaction (attach operations on one volume run one at a time). */
  private async lockVolume(db: Queryable, id: string): Promise<StoredVolume> {
    const v = await this.volumes.findById(db, id, null, true);
    if (!v) throw volumeNotFound(id);
    return v;
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
    if (paging.marker !== null && !(await this.attachments.findById(this.db, paging.marker, projectId))) {
      throw new NotFoundError('Marker', paging.marker, `Marker ${paging.marker} could not be found.`);
    }
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
      const locked = await this.lockVolume(em, v.id);
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
      const locked = await this.lockVolume(em, v.id);
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
      const v = await this.lockVolume(em, a.volumeId);
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
      const v = await this.lockVolume(em, a.volumeId);
      return this.steps.finishDetach(em, v, id);
    });
    return { attachments: remaining.map(attachmentSummaryView) };
  }

  // ---- legacy volume actions ----

  /**
   * `os-attach` (Cinder API `attach` + manager `attach_volume`, an RPC call upstream): records an
   * attached attachment and moves the volume to in-use. A readonly volume needs mode `ro`; an
   * in-use volume takes a second attachment only when multiattach; attaching the same instance (or
   * host) again just marks the volume in-use. Manager refusals read `Error attaching volume - …`.
   */
  async attach(api: ApiRequest, v: StoredVolume, rawArgs: unknown): Promise<void> {
    api.authorize('volume_extension:volume_actions:attach', v.projectId);
    const args = parseAttachArgs(rawArgs);
    if (v.status === 'maintenance')
      throw new InvalidStateError('Invalid volume: The volume cannot be attached in maintenance mode.');
    if (v.adminMetadata['readonly'] === 'True' && args.mode !== 'ro')
      throw new InvalidInputError(`Invalid attaching mode '${args.mode}' for volume ${v.id}.`);
    const refused = (reason: string): InvalidInputError =>
      new InvalidInputError(`Error attaching volume - InvalidVolume: Invalid volume: ${reason}`);
    const hostName = args.hostName === null ? null : sanitizeHostname(args.hostName);
    await this.db.transaction(async (em) => {
      const now = this.clock.now();
      const locked = await this.lockVolume(em, v.id);
      // Cinder adds the readonly flag when it is missing.
      if (locked.adminMetadata['readonly'] === undefined)
        await this.volumes.setAdminMetadataKey(em, v.id, 'readonly', 'False');
      const attachedMode = locked.adminMetadata['attached_mode'];
      if (locked.status === 'attaching' && attachedMode !== undefined && attachedMode !== args.mode)
        throw refused('being attached by different mode');
      const existing = (await this.attachments.listOfVolume(em, v.id)).find((a) =>
        args.instanceUuid !== null ? a.instanceUuid === args.instanceUuid : a.attachedHost === hostName,
      );
      if (existing) {
        await this.steps.setVolumeStatus(em, locked, 'in-use', null, 'attach', refused);
        return;
      }
      if (locked.status === 'in-use' && !locked.multiattach && locked.migrationStatus === null)
        throw refused('volume is already attached and multiple attachments are not enabled');
      const id = randomUUID();
      await this.attachments.insert(em, {
        id,
        volumeId: v.id,
        volumeHost: locked.host,
        instanceUuid: null,
        attachStatus: 'attaching',
        attachMode: 'null',
        now,
      });
      await this.volumes.setAdminMetadataKey(em, v.id, 'attached_mode', args.mode);
      await this.attachments.update(
        em,
        id,
        {
          attachStatus: 'attached',
          instanceUuid: args.instanceUuid,
          attachedHost: hostName,
          mountpoint: args.mountpoint,
          attachTime: now,
          attachMode: args.mode,
        },
        now,
      );
      await this.steps.setVolumeStatus(em, locked, 'in-use', 'attached', 'attach', refused);
    });
  }

  /**
   * `os-detach` (Cinder API `detach` + manager `detach_volume`): without `attachment_id` the
   * volume's only attachment (none: the volume is simply made available and detached); with
   * several, or an id that is not one of the volume's attachments, Cinder's bug #2004555 check
   * answers 409. The attachment goes and the volume takes the status its remaining attachments
   * imply.
   */
  async detach(
    api: ApiRequest,
    v: StoredVolume,
    rawArgs: unknown,
    prefix = 'Error detaching volume',
  ): Promise<void> {
    const { attachmentId } = parseDetachArgs(rawArgs);
    await this.detachAttachment(v, attachmentId, prefix);
  }

  private async detachAttachment(
    v: StoredVolume,
    attachmentId: string | null,
    prefix: string,
  ): Promise<void> {
    const attachments = await this.attachments.listOfVolume(this.db, v.id);
    let target: StoredAttachment | null = null;
    if (attachmentId === null) {
      if (attachments.length > 1) throw novaConflict('');
      target = attachments[0] ?? null;
    } else {
      const found = await this.attachments.findById(this.db, attachmentId, null);
      if (!found) throw novaConflict('');
      if (found.volumeId !== v.id)
        throw new InvalidInputError('Invalid input received: Mismatched volume and attachment');
      target = found;
    }
    if (v.status === 'maintenance')
      throw new InvalidStateError('Invalid volume: The volume cannot be detached in maintenance mode.');
    await this.db.transaction(async (em) => {
      const locked = await this.lockVolume(em, v.id);
      if (target === null) {
        // No attachment at all: Cinder's manager marks the volume available and detached.
        await this.steps.setVolumeStatus(
          em,
          locked,
          'available',
          'detached',
          'detach',
          (reason) => new InvalidInputError(`${prefix} - InvalidVolume: Invalid volume: ${reason}`),
        );
        return;
      }
      await this.steps.finishDetach(em, locked, target.id);
    });
  }

  /**
   * `os-initialize_connection` (200): the connection the back end offers the connector, without
   * recording anything (Cinder's legacy flow; `os-attach` records the attachment).
   */
  async initializeConnection(
    api: ApiRequest,
    v: StoredVolume,
    rawArgs: unknown,
  ): Promise<Record<string, unknown>> {
    api.authorize('volume_extension:volume_actions:initialize_connection', v.projectId);
    const connector =
      parseConnectorArg(rawArgs, 'os-initialize_connection', { nullable: false, required: true }) ?? '';
    if (v.status === 'maintenance')
      throw new InvalidStateError(
        'Invalid volume: The volume connection cannot be initialized in maintenance mode.',
      );
    const info = await this.steps.connection(v, connector);
    const enforce =
      typeof connector === 'object' && connector !== null ? (connector['enforce_multipath'] ?? false) : false;
    return { connection_info: { ...info, enforce_multipath: enforce } };
  }

  /**
   * `os-terminate_connection` (Cinder API `terminate_connection`): the bug #2004555 check (several
   * attachments → 409), nothing to undo on the file back end (a local file has no export), then
   * `unreserve`: attaching → in-use when attachments remain, else available.
   */
  async terminateConnection(api: ApiRequest, v: StoredVolume, rawArgs: unknown): Promise<void> {
    api.authorize('volume_extension:volume_actions:terminate_connection', v.projectId);
    parseConnectorArg(rawArgs, 'os-terminate_connection', { nullable: true, required: true });
    await this.terminate(v);
  }

  private async terminate(v: StoredVolume): Promise<void> {
    if ((await this.attachments.listOfVolume(this.db, v.id)).length > 1) throw novaConflict('');
    const now = this.clock.now();
    await this.volumes.transition(
      this.db,
      v.id,
      v.attachments.length > 0 ? VOLUME_OPERATIONS.unreserveToInUse : VOLUME_OPERATIONS.unreserveToAvailable,
      now,
    );
  }

  /** `os-force_detach` (admin): terminate the connection, then detach (`Error force detaching volume - …`). */
  async forceDetach(api: ApiRequest, v: StoredVolume, rawArgs: unknown): Promise<void> {
    api.authorize('volume_extension:volume_admin_actions:force_detach', v.projectId);
    parseConnectorArg(rawArgs, 'os-force_detach', { nullable: true, required: false });
    const attachmentId = parseForceDetachAttachmentId(rawArgs);
    await this.terminate(v);
    const fresh = (await this.volumes.findById(this.db, v.id, null)) ?? v;
    await this.detachAttachment(fresh, attachmentId, 'Error force detaching volume');
  }
}
