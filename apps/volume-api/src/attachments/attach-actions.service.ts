import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  parseAttachArgs,
  parseConnectorArg,
  parseDetachArgs,
  parseForceDetachAttachmentId,
  VOLUME_OPERATIONS,
} from '@osc/block-storage-domain';
import { ConflictError, InvalidInputError, InvalidStateError } from '@osc/errors';
import {
  AttachmentRepository,
  VolumeRepository,
  type StoredAttachment,
  type StoredVolume,
} from '@osc/block-storage-persistence';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { AttachSteps } from './attach-steps';

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
 * The legacy attach actions of `POST /volumes/{id}/action` (BS-8.1.9): `os-attach`, `os-detach`,
 * `os-initialize_connection`, `os-terminate_connection` and `os-force_detach`, on the volume
 * VolumeActionsService loaded. As in the attachments API, Cinder's volume service work is
 * synchronous here, and every change of the volume's status is a compare-and-set on the
 * attach-flow sources under a lock of the volume row (AttachSteps).
 */
@Injectable()
export class AttachActionsService {
  private readonly attachments = new AttachmentRepository();
  private readonly volumes = new VolumeRepository();
  private readonly steps: AttachSteps;

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.steps = new AttachSteps(db, clock);
  }

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
      const locked = await this.steps.lockVolume(em, v.id);
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
      const locked = await this.steps.lockVolume(em, v.id);
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
