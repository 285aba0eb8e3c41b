import { randomUUID } from 'node:crypto';
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  admitFilters,
  nextPageLink,
  parseBoolean,
  parseCreateVolumeType,
  parseDictLiteral,
  parsePaging,
  parseUpdateVolumeType,
  queryValue,
  SORT_ALIASES,
  supports,
  VOLUME_TYPE_SORT_KEYS,
  volumeTypeCreateView,
  volumeTypeUpdateView,
  volumeTypeView,
} from '@osc/block-storage-domain';
import { ConflictError, InternalError, InvalidInputError, NotFoundError } from '@osc/errors';
import {
  QuotaRepository,
  VolumeTypeRepository,
  isUniqueViolation,
  type StoredVolumeType,
  type TypeVisibilityFilter,
} from '@osc/block-storage-persistence';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { VOLUME_API_CONFIG, type VolumeApiConfig } from '../volume-api.tokens';
import { loadAnyType, typeNotFound } from './volume-type-lookup';

/**
 * Volume types (spec 7.2): list, show, create, update, delete, and the lookups other services
 * place and check volumes by (a visible type, the default type, a type's encryption). Extra specs,
 * encryption, access and per-project defaults are services of their own in this folder.
 */
@Injectable()
export class VolumeTypesService implements OnModuleInit {
  private readonly types = new VolumeTypeRepository();
  private readonly quotas = new QuotaRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(VOLUME_API_CONFIG) private readonly config: VolumeApiConfig,
  ) {}

  /** The installation always has the public `__DEFAULT__` type (BS-7.2.9). */
  async onModuleInit(): Promise<void> {
    if (await this.types.findAny(this.db, '__DEFAULT__')) return;
    try {
      await this.types.insert(this.db, {
        id: randomUUID(),
        name: '__DEFAULT__',
        description: 'Default Volume Type',
        isPublic: true,
        extraSpecs: {},
        now: this.clock.now(),
      });
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
    }
  }

  /** A type visible to the caller, by id or name; 404 otherwise (BS-7.2.6). */
  async visibleType(api: ApiRequest, idOrName: string): Promise<StoredVolumeType> {
    const t = await this.types.findVisible(this.db, idOrName, {
      projectId: api.ctx.projectId,
      isAdmin: api.isAdmin,
    });
    if (!t) throw typeNotFound(idOrName);
    return t;
  }

  /** The default type of the caller's project, else the installation default (BS-7.2.8). */
  async defaultType(projectId: string): Promise<StoredVolumeType> {
    const own = await this.types.getDefault(this.db, projectId);
    if (own) {
      const t = await this.types.findAny(this.db, own.volumeTypeId);
      if (t) return t;
    }
    const t = await this.types.findAny(this.db, this.config.defaultVolumeType);
    if (!t)
      throw new InternalError(
        `The configured default volume type ${this.config.defaultVolumeType} was not found.`,
      );
    return t;
  }

  /** The encryption settings of a type, if any (volumes of it are encrypted, BS-7.4.4). */
  encryptionOf(typeId: string) {
    return this.types.getEncryption(this.db, typeId);
  }

  async list(api: ApiRequest): Promise<Record<string, unknown>> {
    const filters = admitFilters('volume_type', api.query, {
      mv: api.mv,
      isAdmin: api.isAdmin,
      ignore: ['is_public', 'extra_specs'],
    });
    void filters;
    let visibility: TypeVisibilityFilter = 'public-and-granted';
    const isPublic = queryValue(api.query['is_public']);
    if (api.isAdmin && isPublic !== undefined) {
      if (isPublic.trim().toLowerCase() === 'none') visibility = 'all';
      else visibility = parseBoolean(isPublic, 'is_public') ? 'public-and-granted' : 'private';
    }
    let specFilter: Record<string, string> | null = null;
    const specs = queryValue(api.query['extra_specs']);
    if (specs !== undefined && supports(api.mv, 'types.extra-specs-filter')) {
      specFilter = parseDictLiteral(specs);
      if (specFilter === null)
        throw new InvalidInputError(
          `Invalid input received: extra_specs filter must be a dictionary, got ${specs.slice(0, 60)}`,
        );
    }
    const paging = parsePaging(api.query, {
      maxLimit: this.config.maxLimit,
      sortKeys: VOLUME_TYPE_SORT_KEYS,
      sortAliases: SORT_ALIASES,
    });
    if (paging.marker !== null && !(await this.types.markerExists(this.db, paging.marker)))
      throw new NotFoundError('Volume type', paging.marker, `Marker ${paging.marker} could not be found.`);
    const items = await this.types.list(
      this.db,
      { projectId: api.ctx.projectId, isAdmin: api.isAdmin },
      visibility,
      specFilter,
      paging,
    );
    const out: Record<string, unknown> = { volume_types: items.map((t) => volumeTypeView(t, api.isAdmin)) };
    const last = items[items.length - 1];
    if (last && items.length === paging.limit)
      out['volume_type_links'] = [nextPageLink(api.links, api.collectionPath, api.query, last.id)];
    return out;
  }

  async show(api: ApiRequest, id: string): Promise<Record<string, unknown>> {
    const t = id === 'default' ? await this.defaultType(api.ctx.projectId) : await this.visibleType(api, id);
    return { volume_type: volumeTypeView(t, api.isAdmin) };
  }

  async create(api: ApiRequest, body: unknown): Promise<Record<string, unknown>> {
    api.authorize('volume_extension:type_create');
    const input = parseCreateVolumeType(body);
    const id = randomUUID();
    try {
      await this.db.transaction(async (em) => {
        if (await this.types.nameTaken(em, input.name, null))
          throw new ConflictError(`Volume Type ${input.name} already exists.`);
        await this.types.insert(em, { id, ...input, now: this.clock.now() });
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw new ConflictError(`Volume Type ${input.name} already exists.`);
      throw e;
    }
    return { volume_type: volumeTypeCreateView(await loadAnyType(this.db, id)) };
  }

  async update(api: ApiRequest, id: string, body: unknown): Promise<Record<string, unknown>> {
    api.authorize('volume_extension:type_update');
    const input = parseUpdateVolumeType(body);
    const current = await loadAnyType(this.db, id);
    try {
      await this.db.transaction(async (em) => {
        if (input.name !== undefined && input.name !== current.name) {
          if (await this.types.nameTaken(em, input.name, current.id))
            throw new ConflictError(`Volume Type ${input.name} already exists.`);
          await this.quotas.renameTypeKeys(em, current.name, input.name);
        }
        await this.types.update(em, current.id, input, this.clock.now());
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw new ConflictError(`Volume Type ${input.name ?? ''} already exists.`);
      throw e;
    }
    return { volume_type: volumeTypeUpdateView(await loadAnyType(this.db, current.id)) };
  }

  async remove(api: ApiRequest, id: string): Promise<void> {
    api.authorize('volume_extension:type_delete');
    const t = await loadAnyType(this.db, id);
    await this.db.transaction(async (em) => {
      if (t.name === this.config.defaultVolumeType || (await this.types.isProjectDefault(em, t.id))) {
        throw new InvalidInputError(`Invalid volume type: Default volume type ${t.name} can not be deleted.`);
      }
      if (await this.types.isInUse(em, t.id))
        throw new InvalidInputError(`Invalid volume type: Target volume type ${t.id} is still in use.`);
      if ((await this.types.countActive(em)) <= 1)
        throw new InvalidInputError('Invalid volume type: The last volume type can not be deleted.');
      await this.types.softDelete(em, t.id, this.clock.now());
    });
  }
}
