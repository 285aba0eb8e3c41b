import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  groupTypeView,
  isUuid,
  parseCreateGroupType,
  parseGroupSpecItem,
  parseGroupSpecs,
  parseInteger,
  parseSort,
  parseUpdateGroupType,
  queryValue,
  requireEnvelope,
  supports,
  type GroupTypeValue,
} from '@osc/block-storage-domain';
import { ConflictError, InvalidInputError, NotFoundError } from '@osc/errors';
import { GroupTypeRepository, isUniqueViolation, type SimplePage } from '@osc/block-storage-persistence';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { VOLUME_API_CONFIG, type VolumeApiConfig } from '../volume-api.tokens';

export const groupTypeNotFound = (id: string): NotFoundError =>
  new NotFoundError('Group type', id, `Group type ${id} could not be found.`);
const GROUP_TYPE_SORT_KEYS = ['name', 'id', 'created_at', 'description', 'is_public'];

/** Group types and their specs (3.11+, BS-7.13). Writes are admin-only by default. */
@Injectable()
export class GroupTypesService {
  private readonly types = new GroupTypeRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(VOLUME_API_CONFIG) private readonly config: VolumeApiConfig,
  ) {}

  private gate(api: ApiRequest): void {
    if (!supports(api.mv, 'group-types.api'))
      throw new NotFoundError('resource', 'group_types', 'The resource could not be found.');
  }

  /** A group type by id, or by name (group creation accepts either). */
  async find(idOrName: string): Promise<GroupTypeValue> {
    const t =
      (isUuid(idOrName) ? await this.types.find(this.db, idOrName.toLowerCase(), false) : null) ??
      (await this.types.find(this.db, idOrName, true));
    if (!t) throw groupTypeNotFound(idOrName);
    return t;
  }

  private async byId(id: string): Promise<GroupTypeValue> {
    const t = isUuid(id) ? await this.types.find(this.db, id.toLowerCase(), false) : null;
    if (!t) throw groupTypeNotFound(id);
    return t;
  }

  async list(api: ApiRequest): Promise<Record<string, unknown>> {
    this.gate(api);
    const raw = queryValue(api.query['is_public']);
    let isPublic: boolean | null = true;
    if (raw !== undefined) {
      const v = raw.trim().toLowerCase();
      isPublic =
        v === 'none'
          ? null
          : ['true', '1', 't', 'yes', 'y', 'on'].includes(v)
            ? true
            : ['false', '0', 'f', 'no', 'n', 'off'].includes(v)
              ? false
              : null;
      if (isPublic === null && v !== 'none')
        throw new InvalidInputError(
          `Invalid input received: Invalid is_public filter [${raw.slice(0, 100)}]`,
        );
    }
    const sort = parseSort(api.query, GROUP_TYPE_SORT_KEYS);
    const first = sort[0];
    const limitRaw = queryValue(api.query['limit']);
    const offsetRaw = queryValue(api.query['offset']);
    const marker = queryValue(api.query['marker']) ?? null;
    const page: SimplePage = {
      limit:
        limitRaw === undefined
          ? this.config.maxLimit
          : Math.min(parseInteger(limitRaw, 'limit', 0), this.config.maxLimit),
      offset: offsetRaw === undefined ? 0 : parseInteger(offsetRaw, 'offset', 0),
      marker: marker !== null && isUuid(marker) ? marker : null,
      desc: first ? first.dir === 'desc' : false,
      sortKey: first && first.key !== 'created_at' ? first.key : undefined,
    };
    if (marker !== null && (page.marker === null || !(await this.types.find(this.db, marker, false))))
      throw new NotFoundError('Marker', marker, `Marker ${marker} could not be found.`);
    // Non-admins see public types only; admins see private ones when asking for them.
    const items = await this.types.list(
      this.db,
      api.isAdmin && isPublic !== true,
      page,
      api.isAdmin ? isPublic : true,
    );
    const showSpecs = api.allowed('group:access_group_types_specs');
    return { group_types: items.map((t) => groupTypeView(t, showSpecs)) };
  }

  async show(api: ApiRequest, id: string): Promise<Record<string, unknown>> {
    this.gate(api);
    if (id === 'default')
      throw new NotFoundError('Group type', 'default', 'Default group type can not be found.');
    const t = await this.byId(id);
    if (!t.isPublic && !api.isAdmin) throw groupTypeNotFound(id);
    return { group_type: groupTypeView(t, api.allowed('group:access_group_types_specs')) };
  }

  async create(api: ApiRequest, body: unknown): Promise<Record<string, unknown>> {
    this.gate(api);
    api.authorize('group:group_types:create');
    const input = parseCreateGroupType(body);
    const t: GroupTypeValue = {
      id: randomUUID(),
      name: input.name,
      description: input.description,
      isPublic: input.isPublic,
      groupSpecs: input.groupSpecs,
    };
    try {
      await this.db.transaction(async (em) => this.types.insert(em, t, this.clock.now()));
    } catch (e) {
      if (isUniqueViolation(e)) throw new ConflictError(`Group Type ${t.name} already exists.`);
      throw e;
    }
    return { group_type: groupTypeView(t, true) };
  }

  async update(api: ApiRequest, id: string, body: unknown): Promise<Record<string, unknown>> {
    this.gate(api);
    api.authorize('group:group_types:update');
    const input = parseUpdateGroupType(body);
    const t = await this.byId(id);
    const set: Record<string, unknown> = {};
    if (input.name !== undefined) set['name'] = input.name;
    if (input.description !== undefined) set['description'] = input.description;
    if (input.isPublic !== undefined) set['is_public'] = input.isPublic;
    try {
      await this.types.update(this.db, t.id, set, this.clock.now());
    } catch (e) {
      if (isUniqueViolation(e)) throw new ConflictError(`Group Type ${input.name ?? t.name} already exists.`);
      throw e;
    }
    return {
      group_type: groupTypeView(await this.byId(t.id), api.allowed('group:access_group_types_specs')),
    };
  }

  async remove(api: ApiRequest, id: string): Promise<void> {
    this.gate(api);
    api.authorize('group:group_types:delete');
    const t = await this.byId(id);
    await this.db.transaction(async (em) => {
      if (await this.types.inUse(em, t.id))
        throw new InvalidInputError(
          `Group Type ${t.id} deletion is not allowed with groups present with the type.`,
        );
      if (!(await this.types.softDelete(em, t.id, this.clock.now()))) throw groupTypeNotFound(id);
    });
  }

  async listSpecs(api: ApiRequest, id: string): Promise<Record<string, unknown>> {
    this.gate(api);
    api.authorize('group:group_types_specs:get_all');
    return { group_specs: { ...(await this.byId(id)).groupSpecs } };
  }

  async showSpec(api: ApiRequest, id: string, key: string): Promise<Record<string, unknown>> {
    this.gate(api);
    api.authorize('group:group_types_specs:get');
    const t = await this.byId(id);
    if (!(key in t.groupSpecs))
      throw new NotFoundError('Group type spec', key, `Group Type ${t.id} has no specs with key ${key}.`);
    return { [key]: t.groupSpecs[key] };
  }

  async setSpecs(api: ApiRequest, id: string, body: unknown): Promise<Record<string, unknown>> {
    this.gate(api);
    api.authorize('group:group_types_specs:create');
    const specs = parseGroupSpecs(requireEnvelope(body, 'group_specs'));
    const t = await this.byId(id);
    await this.db.transaction(async (em) => this.types.setSpecs(em, t.id, specs));
    return { group_specs: specs };
  }

  async updateSpec(
    api: ApiRequest,
    id: string,
    key: string,
    body: unknown,
  ): Promise<Record<string, unknown>> {
    this.gate(api);
    api.authorize('group:group_types_specs:update');
    const value = parseGroupSpecItem(key, body);
    const t = await this.byId(id);
    await this.types.setSpecs(this.db, t.id, { [key]: value });
    return { [key]: value };
  }

  async deleteSpec(api: ApiRequest, id: string, key: string): Promise<void> {
    this.gate(api);
    api.authorize('group:group_types_specs:delete');
    const t = await this.byId(id);
    if (!(await this.types.deleteSpec(this.db, t.id, key)))
      throw new NotFoundError('Group type spec', key, `Group Type ${t.id} has no specs with key ${key}.`);
  }
}
