import {
  attachFlowSources,
  attachmentConnectionInfo,
  connectionMode,
  localConnection,
  statusAfterDetach,
  type AttachMode,
  type Connector,
  type LocalConnectionInfo,
  type VolumeStatus,
} from '@osc/block-storage-domain';
import { InvalidStateError } from '@osc/errors';
import {
  AttachmentRepository,
  PoolRepository,
  QosSpecsRepository,
  VolumeRepository,
  VolumeTypeRepository,
  type Queryable,
  type StoredAttachment,
  type StoredVolume,
} from '@osc/block-storage-persistence';
import type { Clock } from '@osc/platform';
import { volumeNotFound } from '../volumes/volume-lookup';

/**
 * The steps the attachments API (AttachmentsService) and the legacy attach actions
 * (AttachActionsService) share: locking the volume row, the connection a volume's back end offers, recording a connection on an attachment, finishing a
 * detach, and the attach-flow compare-and-set of the volume's status. Each runs on the `db` it is
 * given (a transaction's entity manager) or, for `connection`, on the service's data source.
 */
export class AttachSteps {
  private readonly attachments = new AttachmentRepository();
  private readonly volumes = new VolumeRepository();
  private readonly pools = new PoolRepository();
  private readonly types = new VolumeTypeRepository();
  private readonly qos = new QosSpecsRepository();

  constructor(
    private readonly db: Queryable,
    private readonly clock: Clock,
  ) {}

  /** The volume row locked for the rest of the transaction (attach operations on one volume run one at a time). */
  async lockVolume(db: Queryable, id: string): Promise<StoredVolume> {
    const v = await this.volumes.findById(db, id, null, true);
    if (!v) throw volumeNotFound(id);
    return v;
  }

  /** The connection the volume's back end offers `connector` (400 when it cannot serve it). */
  async connection(v: StoredVolume, connector: Connector | string): Promise<LocalConnectionInfo> {
    const pool = v.host === null ? null : await this.pools.find(this.db, v.host);
    const type = await this.types.findAny(this.db, v.volumeTypeId);
    let frontEndQos: Record<string, string> | null = null;
    if (type?.qosSpecsId) {
      const q = await this.qos.find(this.db, type.qosSpecsId);
      if (q && (q.consumer === 'front-end' || q.consumer === 'both'))
        frontEndQos = Object.fromEntries(
          Object.entries(q.specs).filter((e): e is [string, string] => e[1] !== null),
        );
    }
    return localConnection(
      {
        volumeId: v.id,
        host: v.host,
        encrypted: v.encryptionKeyId !== null,
        adminMetadata: v.adminMetadata,
        cacheableSpec: type?.extraSpecs['cacheable'] ?? null,
        frontEndQos,
      },
      pool?.capabilities['location_info'],
      connector,
    );
  }

  /**
   * Cinder manager `attachment_update` → `volume_attached(mark_attached=False)`: the attachment
   * becomes `attaching` with the connector, its host and mountpoint, the mode and the connection
   * info; the volume becomes `attaching`.
   */
  async connect(
    db: Queryable,
    v: StoredVolume,
    a: StoredAttachment,
    connector: Connector,
    info: LocalConnectionInfo,
  ): Promise<void> {
    const now = this.clock.now();
    const mode = connectionMode(a.attachMode, connector);
    const stored: Record<string, unknown> =
      a.attachMode !== 'null' ? { ...connector, mode } : { ...connector };
    const host = typeof connector['host'] === 'string' ? connector['host'] : '';
    const mountpoint = typeof connector['mountpoint'] === 'string' ? connector['mountpoint'] : 'na';
    await this.attachments.update(
      db,
      a.id,
      {
        attachStatus: 'attaching',
        connector: stored,
        connectionInfo: attachmentConnectionInfo(info, a.id, connector),
        attachedHost: host,
        mountpoint,
        attachTime: now,
        attachMode: mode as AttachMode,
      },
      now,
    );
    await this.setVolumeStatus(db, v, 'attaching', 'attaching', 'connect the attachment');
  }

  /**
   * Cinder `finish_detach` / `volume_detached`: removes the attachment, drops `attached_mode`, and
   * sets the volume's status and attach_status from the attachments left. A volume busy with
   * another operation (backing-up, extending, …) keeps its status; only attach_status follows.
   */
  async finishDetach(db: Queryable, v: StoredVolume, attachmentId: string): Promise<StoredAttachment[]> {
    const now = this.clock.now();
    await this.attachments.softDelete(db, attachmentId, now);
    const remaining = await this.attachments.listOfVolume(db, v.id);
    const next = statusAfterDetach(
      remaining.map((r) => r.attachStatus),
      v,
    );
    await this.volumes.setAdminMetadataKey(db, v.id, 'attached_mode', null);
    const moved =
      next.status !== null &&
      (await this.volumes.compareAndSetStatus(db, v.id, attachFlowSources(next.status), next.status, now, {
        attach_status: next.attachStatus,
      }));
    if (!moved) await this.volumes.update(db, v.id, { attach_status: next.attachStatus }, now);
    return remaining;
  }

  /** Compare-and-set of the volume to `to` from the attach-flow sources of the domain's table. */
  async setVolumeStatus(
    db: Queryable,
    v: StoredVolume,
    to: VolumeStatus,
    attachStatus: string | null,
    what: string,
    refuse: (reason: string) => Error = (reason) => new InvalidStateError(`Invalid volume: ${reason}`),
  ): Promise<void> {
    const sources = attachFlowSources(to);
    const set = attachStatus === null ? {} : { attach_status: attachStatus };
    if (!(await this.volumes.compareAndSetStatus(db, v.id, sources, to, this.clock.now(), set))) {
      throw refuse(`Volume ${v.id} status must be ${sources.join(', ')} to ${what}, but it is ${v.status}.`);
    }
  }
}
