import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  isUuid,
  nextPageLink,
  parseCreateQosSpecs,
  parseInteger,
  parseSort,
  parseQosDeleteKeys,
  parseQosVolumeTypeId,
  parseUpdateQosSpecs,
  qosAssociationsView,
  qosForceFlag,
  qosSpecsItemView,
  qosSpecsView,
  queryValue,
  type QosSpecsValue,
} from '@osc/block-storage-domain';
import { ConflictError, InvalidInputError, NotFoundError } from '@osc/errors';
import {
  QosSpecsRepository,
  isUniqueViolation,
  type QosListQuery,
  type Queryable,
} from '@osc/block-storage-persistence';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { VOLUME_API_CONFIG, type VolumeApiConfig } from '../volume-api.tokens';

const qosNotFound = (id: string): NotFoundError =>
  new NotFoundError('QoS spec', id, `No such QoS spec ${id}.`);
const typeNotFound = (id: string): NotFoundError =>
  new NotFoundError('Volume type', id, `Volume type ${id} could not be found.`);

const POLICY = {
  getAll: 'volume_extension:qos_specs_manage:get_all',
  get: 'volume_extension:qos_specs_manage:get',
  create: 'volume_extension:qos_specs_manage:create',
  update: 'volume_extension:qos_specs_manage:update',
  delete: 'volume_extension:qos_specs_manage:delete',
} as const;

/**
 * QoS specs (`/qos-specs`, BS-7.13; admin-only by Cinder's default policy) and their association
 * with volume types (`volume_types.qos_specs_id`, shown to admins on the types).
 */
@Injectable()
export class QosSpecsService {
  private readonly repo = new QosSpecsRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(VOLUME_API_CONFIG) private readonly config: VolumeApiConfig,
  ) {}

  private async byId(db: Queryable, id: string): Promise<QosSpecsValue> {
    const q = await this.repo.find(db, id);
    if (!q) throw qosNotFound(id);
    return q;
  }

  /** Locks the spec for the rest of the transaction, 404 when there is none. */
  private async locked(db: Queryable, id: string): Promise<string> {
    if (!(await this.repo.lock(db, id))) throw qosNotFound(id);
    return id.toLowerCase();
  }

  /** Newest first by default; `sort`/`sort_key`, `limit`, `offset`, `marker`, and exact `id`/`name`/`consumer` filters. */
  async list(api: ApiRequest): Promise<Record<string, unknown>> {
    api.authorize(POLICY.getAll);
    const sort = parseSort(api.query, ['created_at', 'name', 'consumer', 'id'])[0];
    const limitRaw = queryValue(api.query['limit']);
    const offsetRaw = queryValue(api.query['offset']);
    const marker = queryValue(api.query['marker']) ?? null;
    const limit =
      limitRaw === undefined
        ? this.config.maxLimit
        : Math.min(parseInteger(limitRaw, 'limit', 0), this.config.maxLimit);
    const filters: { id?: string; name?: string; consumer?: string } = {};
    for (const key of ['id', 'name', 'consumer'] as const) {
      const v = queryValue(api.query[key]);
      if (v !== undefined) filters[key] = v;
    }
    const q: QosListQuery = {
      filters,
      sortKey: (sort?.key ?? 'created_at') as QosListQuery['sortKey'],
      desc: sort ? sort.dir === 'desc' : true,
      marker,
      limit,
      offset: offsetRaw === undefined ? 0 : parseInteger(offsetRaw, 'offset', 0),
    };
    if (marker !== null && (!isUuid(marker) || !(await this.repo.find(this.db, marker)))) {
      throw new NotFoundError('Marker', marker, `Marker ${marker} could not be found.`);
    }
    const items = await this.repo.list(this.db, q);
    const out: Record<string, unknown> = { qos_specs: items.map(qosSpecsItemView) };
    const last = items[items.length - 1];
    if (last && items.length === limit)
      out['qos_specs_links'] = [nextPageLink(api.links, api.collectionPath, api.query, last.id)];
    return out;
  }

  async show(api: ApiRequest, id: string): Promise<Record<string, unknown>> {
    api.authorize(POLICY.get);
    return qosSpecsView(await this.byId(this.db, id), api.links);
  }

  async create(api: ApiRequest, body: unknown): Promise<Record<string, unknown>> {
    api.authorize(POLICY.create);
    const input = parseCreateQosSpecs(body);
    const q: QosSpecsValue = {
      id: randomUUID(),
      name: input.name,
      consumer: input.consumer,
      specs: input.specs,
    };
    try {
      await this.db.transaction(async (em) => this.repo.insert(em, q, this.clock.now()));
    } catch (e) {
      if (isUniqueViolation(e)) throw new ConflictError(`QoS Specs ${q.name} already exists.`);
      throw e;
    }
    return qosSpecsView(q, api.links);
  }

  /** Sets keys (and the consumer); answers the keys that were set, as Cinder echoes the request. */
  async update(api: ApiRequest, id: string, body: unknown): Promise<Record<string, unknown>> {
    api.authorize(POLICY.update);
    const input = parseUpdateQosSpecs(body);
    await this.db.transaction(async (em) => {
      const qid = await this.locked(em, id);
      await this.repo.update(em, qid, input, this.clock.now());
    });
    return { qos_specs: input.echo };
  }

  /** All keys or none: a key the spec lacks → 404 naming it. */
  async deleteKeys(api: ApiRequest, id: string, body: unknown): Promise<void> {
    api.authorize(POLICY.delete);
    const keys = parseQosDeleteKeys(body);
    await this.db.transaction(async (em) => {
      const qid = await this.locked(em, id);
      const missing = await this.repo.deleteKeys(em, qid, keys);
      if (missing !== null)
        throw new NotFoundError('QoS spec key', missing, `QoS spec ${id} has no spec with key ${missing}.`);
    });
  }

  /** Without `force` a spec still used by volume types is refused (400, as Cinder); with it they are unlinked first. */
  async remove(api: ApiRequest, id: string): Promise<void> {
    api.authorize(POLICY.delete);
    const force = qosForceFlag(queryValue(api.query['force']));
    await this.db.transaction(async (em) => {
      const qid = await this.locked(em, id);
      if ((await this.repo.associations(em, qid)).length > 0) {
        if (!force) throw new InvalidInputError('Qos specs still in use.');
        await this.repo.disassociateAll(em, qid);
      }
      await this.repo.softDelete(em, qid, this.clock.now());
    });
  }

  async associations(api: ApiRequest, id: string): Promise<Record<string, unknown>> {
    api.authorize(POLICY.getAll);
    const q = await this.byId(this.db, id);
    return qosAssociationsView(await this.repo.associations(this.db, q.id));
  }

  async associate(api: ApiRequest, id: string): Promise<void> {
    api.authorize(POLICY.update);
    const typeId = parseQosVolumeTypeId(queryValue(api.query['vol_type_id']));
    await this.db.transaction(async (em) => {
      const qid = await this.locked(em, id);
      const outcome = await this.repo.associate(em, qid, typeId);
      if (outcome === 'no-type') throw typeNotFound(typeId);
      if (outcome !== 'associated') {
        throw new InvalidInputError(
          `Invalid volume type: Type ${typeId} is already associated with another qos specs: ${outcome.otherSpecsId}`,
        );
      }
    });
  }

  async disassociate(api: ApiRequest, id: string): Promise<void> {
    api.authorize(POLICY.update);
    const typeId = parseQosVolumeTypeId(queryValue(api.query['vol_type_id']));
    await this.db.transaction(async (em) => {
      const qid = await this.locked(em, id);
      if (!(await this.repo.disassociate(em, qid, typeId))) throw typeNotFound(typeId);
    });
  }

  async disassociateAll(api: ApiRequest, id: string): Promise<void> {
    api.authorize(POLICY.update);
    await this.db.transaction(async (em) => {
      const qid = await this.locked(em, id);
      await this.repo.disassociateAll(em, qid);
    });
  }
}
