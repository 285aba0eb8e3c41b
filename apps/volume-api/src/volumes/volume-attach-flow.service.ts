import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { isMigrating, refusalOf, VOLUME_OPERATIONS } from '@osc/block-storage-domain';
import { InvalidStateError } from '@osc/errors';
import { VolumeRepository, type StoredVolume } from '@osc/block-storage-persistence';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';

/**
 * The legacy attach-flow actions Nova calls around an attachment (BS-8.1.9): `os-reserve`,
 * `os-unreserve`, `os-begin_detaching`, `os-roll_detaching`. The attachment records themselves
 * (os-attach, os-detach, connections: AttachActionsService; the attachments API:
 * AttachmentsService) live in attachments/.
 */
@Injectable()
export class VolumeAttachFlowService {
  private readonly volumes = new VolumeRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Cinder: available (or in-use for multiattach) → attaching; anything else is 400. */
  async reserve(v: StoredVolume): Promise<void> {
    const operation = v.multiattach ? VOLUME_OPERATIONS.reserveMultiattach : VOLUME_OPERATIONS.reserve;
    if (!(await this.volumes.transition(this.db, v.id, operation, this.clock.now()))) {
      const now = (await this.volumes.findById(this.db, v.id, null))?.status ?? v.status;
      throw new InvalidStateError(refusalOf(operation, { id: v.id, status: now }));
    }
  }

  async beginDetaching(v: StoredVolume): Promise<void> {
    const refused = new InvalidStateError(
      refusalOf(VOLUME_OPERATIONS.beginDetaching, { id: v.id, status: v.status }),
    );
    if (v.attachStatus !== 'attached' || isMigrating(v.migrationStatus)) throw refused;
    if (!(await this.volumes.transition(this.db, v.id, VOLUME_OPERATIONS.beginDetaching, this.clock.now())))
      throw refused;
  }

  /** Cinder answers 202 whatever the status: a volume no longer attaching is left as it is. */
  async unreserve(v: StoredVolume): Promise<void> {
    await this.volumes.transition(
      this.db,
      v.id,
      v.attachments.length > 0 ? VOLUME_OPERATIONS.unreserveToInUse : VOLUME_OPERATIONS.unreserveToAvailable,
      this.clock.now(),
    );
  }

  /** Nova gave up a detach: detaching → in-use (202 whatever the status, as in Cinder). */
  async rollDetaching(v: StoredVolume): Promise<void> {
    await this.volumes.transition(this.db, v.id, VOLUME_OPERATIONS.rollDetaching, this.clock.now());
  }
}
