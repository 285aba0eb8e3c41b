import { randomBytes, randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  checkPerVolumeSize,
  isTrueish,
  isUuid,
  parseAcceptTransfer,
  parseCreateTransfer,
  parseInteger,
  queryValue,
  snapshotQuotaDeltas,
  supports,
  transferAcceptView,
  transferCreateView,
  transferDetailView,
  transferKeyHash,
  transferKeyMatches,
  transferSummaryView,
  volumeQuotaDeltas,
  type QuotaDelta,
  type TransferValue,
  VOLUME_OPERATIONS,
  refusalOf,
} from '@osc/block-storage-domain';
import { InvalidInputError, InvalidStateError, NotFoundError, OverLimitError } from '@osc/errors';
import {
  QuotaRepository,
  TransferRepository,
  VolumeRepository,
  type SimplePage,
} from '@osc/block-storage-persistence';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { VOLUME_API_CONFIG, type VolumeApiConfig } from '../volume-api.tokens';
import { volumeNotFound } from '../volumes/volume-lookup';

const transferNotFound = (id: string): NotFoundError =>
  new NotFoundError('Transfer', id, `Transfer ${id} could not be found.`);

/** Which route family served the request: `/os-volume-transfer` or `/volume-transfers` (3.55+). */
export type TransferRoute = 'legacy' | 'new';

/**
 * Volume transfers (BS-7.10): a donor offers a volume (it waits in `awaiting-transfer`) under a
 * one-time auth key; any project holding the key takes the volume and its snapshots, quota moving
 * from donor to recipient in the same transaction.
 */
@Injectable()
export class TransfersService {
  private readonly transfers = new TransferRepository();
  private readonly volumes = new VolumeRepository();
  private readonly quotas = new QuotaRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(VOLUME_API_CONFIG) private readonly config: VolumeApiConfig,
  ) {}

  private gate(api: ApiRequest, route: TransferRoute): void {
    if (route === 'new' && !supports(api.mv, 'transfers.no-snapshots'))
      throw new NotFoundError('resource', 'volume-transfers', 'The resource could not be found.');
  }

  private async load(api: ApiRequest, id: string): Promise<TransferValue> {
    const t = isUuid(id)
      ? await this.transfers.findById(this.db, id, api.isAdmin ? null : api.ctx.projectId)
      : null;
    if (!t) throw transferNotFound(id);
    return t;
  }

  async create(api: ApiRequest, route: TransferRoute, body: unknown): Promise<Record<string, unknown>> {
    this.gate(api, route);
    api.authorize('volume:create_transfer');
    const input = parseCreateTransfer(body, route === 'new');
    const v = await this.volumes.findById(this.db, input.volumeId, api.isAdmin ? null : api.ctx.projectId);
    if (!v) throw volumeNotFound(input.volumeId);
    if (v.status !== 'available')
      throw new InvalidStateError(
        `Invalid volume: Volume ${v.id} status must be available to transfer, but it is ${v.status}.`,
      );
    if (v.encrypted && (!supports(api.mv, 'transfers.encrypted') || input.noSnapshots)) {
      throw new InvalidStateError(
        `Invalid volume: Encrypted volume ${v.id} cannot be transferred${input.noSnapshots ? ' without its snapshots' : ' below microversion 3.70'}.`,
      );
    }
    if (!input.noSnapshots) {
      const bad = (await this.volumes.snapshotsOf(this.db, v.id)).find((s) => s.status !== 'available');
      if (bad)
        throw new InvalidStateError(
          `Invalid snapshot: Snapshot ${bad.id} of volume ${v.id} must be available to transfer, but it is ${bad.status}.`,
        );
    }
    const authKey = randomBytes(8).toString('hex');
    const salt = randomBytes(4).toString('hex');
    const now = this.clock.now();
    const transfer: TransferValue = {
      id: randomUUID(),
      volumeId: v.id,
      name: input.name,
      salt,
      cryptHash: transferKeyHash(salt, authKey),
      noSnapshots: input.noSnapshots,
      sourceProjectId: v.projectId,
      destinationProjectId: null,
      accepted: false,
      createdAt: now,
    };
    await this.db.transaction(async (em) => {
      if (!(await this.volumes.transition(em, v.id, VOLUME_OPERATIONS.offerTransfer, now))) {
        throw new InvalidStateError(
          refusalOf(VOLUME_OPERATIONS.offerTransfer, { id: v.id, status: v.status }),
        );
      }
      await this.transfers.insert(em, transfer);
    });
    return { transfer: transferCreateView(api, transfer, authKey) };
  }

  async list(api: ApiRequest, route: TransferRoute, detail: boolean): Promise<Record<string, unknown>> {
    this.gate(api, route);
    api.authorize('volume:get_all_transfers');
    const allTenants = api.isAdmin && isTrueish(queryValue(api.query['all_tenants']));
    const page: SimplePage = { limit: this.config.maxLimit, offset: 0, marker: null, desc: false };
    const mutable = page as { -readonly [K in keyof SimplePage]: SimplePage[K] };
    if (supports(api.mv, 'transfers.pagination')) {
      const limit = queryValue(api.query['limit']);
      const offset = queryValue(api.query['offset']);
      const marker = queryValue(api.query['marker']);
      const sortDir = queryValue(api.query['sort_dir']) ?? queryValue(api.query['sort'])?.split(':')[1];
      if (limit !== undefined)
        mutable.limit = Math.min(parseInteger(limit, 'limit', 0), this.config.maxLimit);
      if (offset !== undefined) mutable.offset = parseInteger(offset, 'offset', 0);
      if (sortDir !== undefined) {
        if (!['asc', 'desc'].includes(sortDir))
          throw new InvalidInputError(
            `Invalid input received: Unknown sort direction, must be 'desc' or 'asc'`,
          );
        mutable.desc = sortDir === 'desc';
      }
      if (marker !== undefined) {
        if (
          !isUuid(marker) ||
          !(await this.transfers.findById(this.db, marker, allTenants ? null : api.ctx.projectId))
        ) {
          throw new NotFoundError('Marker', marker, `Marker ${marker} could not be found.`);
        }
        mutable.marker = marker;
      }
    }
    const items = await this.transfers.list(this.db, allTenants ? null : api.ctx.projectId, page);
    return {
      transfers: items.map((t) => (detail ? transferDetailView(api, t) : transferSummaryView(api, t))),
    };
  }

  async show(api: ApiRequest, route: TransferRoute, id: string): Promise<Record<string, unknown>> {
    this.gate(api, route);
    api.authorize('volume:get_transfer');
    return { transfer: transferDetailView(api, await this.load(api, id)) };
  }

  async remove(api: ApiRequest, route: TransferRoute, id: string): Promise<void> {
    this.gate(api, route);
    const t = await this.load(api, id);
    api.authorize('volume:delete_transfer', t.sourceProjectId);
    const now = this.clock.now();
    await this.db.transaction(async (em) => {
      if (!(await this.transfers.close(em, t.id, now, null))) throw transferNotFound(id);
      await this.volumes.transition(em, t.volumeId, VOLUME_OPERATIONS.endTransfer, now);
    });
  }

  async accept(
    api: ApiRequest,
    route: TransferRoute,
    id: string,
    body: unknown,
  ): Promise<Record<string, unknown>> {
    this.gate(api, route);
    api.authorize('volume:accept_transfer');
    const authKey = parseAcceptTransfer(body);
    const recipient = api.ctx.projectId;
    const now = this.clock.now();
    const accepted = await this.db.transaction(async (em) => {
      const t = isUuid(id) ? await this.transfers.findById(em, id, null, true) : null;
      if (!t) throw transferNotFound(id);
      if (!transferKeyMatches(t, authKey))
        throw new InvalidInputError(`Invalid auth key: Attempt to transfer ${t.id} with invalid auth key.`);
      const v = await this.volumes.findById(em, t.volumeId, null, true);
      if (!v) throw volumeNotFound(t.volumeId);
      if (v.status !== 'awaiting-transfer')
        throw new InvalidStateError(
          `Invalid volume: Volume ${v.id} status must be awaiting-transfer, but it is ${v.status}.`,
        );
      if (v.groupId !== null || v.consistencygroupId !== null)
        throw new InvalidStateError(
          `Invalid volume: Volume ${v.id} is in a group and cannot be transferred.`,
        );
      const snaps = t.noSnapshots ? [] : await this.volumes.snapshotsOf(em, v.id);
      const deltas: QuotaDelta[] = [];
      if (v.consumesQuota) deltas.push(...volumeQuotaDeltas(v.size, v.volumeTypeName));
      for (const s of snaps)
        if (s.consumesQuota) deltas.push(...snapshotQuotaDeltas(s.size, v.volumeTypeName));
      if (recipient !== v.projectId) {
        try {
          checkPerVolumeSize(v.size, await this.quotas.limits(em, recipient));
          await this.quotas.apply(em, recipient, deltas);
        } catch (e) {
          // Transfer accept answers over-quota with Retry-After: 0 and no kind prefix (BS-9.3).
          if (e instanceof OverLimitError) throw new OverLimitError(e.message.replace(/^[A-Za-z]+: /, ''), 0);
          throw e;
        }
        await this.quotas.apply(
          em,
          v.projectId,
          deltas.map((d) => ({ resource: d.resource, delta: -d.delta })),
          'in_use',
          false,
        );
      }
      await this.volumes.transition(em, v.id, VOLUME_OPERATIONS.endTransfer, now, {
        project_id: recipient,
        user_id: api.ctx.userId,
      });
      if (snaps.length > 0) {
        await em.query(
          `UPDATE "snapshots" SET project_id = $1, user_id = $2, updated_at = $3 WHERE id = ANY($4::uuid[]) AND deleted = false`,
          [recipient, api.ctx.userId, now, snaps.map((s) => s.id)],
        );
      }
      await this.transfers.close(em, t.id, now, recipient);
      return t;
    });
    return { transfer: transferAcceptView(api, accepted) };
  }
}
