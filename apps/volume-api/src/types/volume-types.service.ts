import { randomUUID } from 'node:crypto';
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  admitFilters,
  assertCompatibleSpecs,
  ENCRYPTION_SPEC_KEYS,
  encryptionView,
  isTrueish,
  nextPageLink,
  parseBoolean,
  parseCreateEncryption,
  parseCreateVolumeType,
  parseDictLiteral,
  parsePaging,
  parseSetDefaultType,
  parseSetExtraSpecs,
  parseTypeAccessAction,
  parseUpdateEncryption,
  parseUpdateExtraSpec,
  parseUpdateVolumeType,
  queryValue,
  SORT_ALIASES,
  supports,
  visibleExtraSpecs,
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

const typeNotFound = (id: string): NotFoundError =>
  new NotFoundError('Volume type', id, `Volume type ${id} could not be found.`);

/**
 * Volume types, extra specs, encryption types, type access and per-project default types
 * (spec 7.2–7.6). Rules come from the domain; this service loads, checks and stores.
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

  private async anyType(id: string): Promise<StoredVolumeType> {
    const t = await this.types.findAny(this.db, id);
    if (!t) throw typeNotFound(id);
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
    return { volume_type: volumeTypeCreateView(await this.anyType(id)) };
  }

  async update(api: ApiRequest, id: string, body: unknown): Promise<Record<string, unknown>> {
    api.authorize('volume_extension:type_update');
    const input = parseUpdateVolumeType(body);
    const current = await this.anyType(id);
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
    return { volume_type: volumeTypeUpdateView(await this.anyType(current.id)) };
  }

  async remove(api: ApiRequest, id: string): Promise<void> {
    api.authorize('volume_extension:type_delete');
    const t = await this.anyType(id);
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

  // ---- extra specs (BS-7.3) ----

  async listSpecs(api: ApiRequest, id: string): Promise<Record<string, unknown>> {
    const t = await this.visibleType(api, id);
    return { extra_specs: visibleExtraSpecs(t.extraSpecs, api.isAdmin) };
  }

  async showSpec(api: ApiRequest, id: string, key: string): Promise<Record<string, unknown>> {
    const t = await this.visibleType(api, id);
    const specs = visibleExtraSpecs(t.extraSpecs, api.isAdmin);
    if (!(key in specs))
      throw new NotFoundError('Extra spec', key, `Volume Type ${id} has no extra specs with key ${key}.`);
    return { [key]: specs[key] ?? null };
  }

  private async assertNotInUse(typeId: string): Promise<void> {
    if (await this.types.isInUse(this.db, typeId)) {
      throw new InvalidInputError(
        `Invalid volume type: Type ${typeId} is currently in use by volumes; its specifications cannot change.`,
      );
    }
  }

  async setSpecs(api: ApiRequest, id: string, body: unknown): Promise<Record<string, unknown>> {
    api.authorize('volume_extension:types_extra_specs:create');
    const t = await this.anyType(id);
    await this.assertNotInUse(t.id);
    const specs = parseSetExtraSpecs(body);
    assertCompatibleSpecs({ ...t.extraSpecs, ...specs });
    await this.types.upsertSpecs(this.db, t.id, specs);
    return { extra_specs: specs };
  }

  async updateSpec(
    api: ApiRequest,
    id: string,
    key: string,
    body: unknown,
  ): Promise<Record<string, unknown>> {
    api.authorize('volume_extension:types_extra_specs:update');
    const t = await this.anyType(id);
    await this.assertNotInUse(t.id);
    const pair = parseUpdateExtraSpec(key, body);
    assertCompatibleSpecs({ ...t.extraSpecs, [pair.key]: pair.value });
    await this.types.upsertSpecs(this.db, t.id, { [pair.key]: pair.value });
    return { [pair.key]: pair.value };
  }

  async deleteSpec(api: ApiRequest, id: string, key: string): Promise<void> {
    api.authorize('volume_extension:types_extra_specs:delete');
    const t = await this.anyType(id);
    await this.assertNotInUse(t.id);
    if (!(await this.types.deleteSpec(this.db, t.id, key))) {
      throw new NotFoundError('Extra spec', key, `Volume Type ${id} has no extra specs with key ${key}.`);
    }
  }

  // ---- encryption (BS-7.4) ----

  async showEncryption(api: ApiRequest, id: string): Promise<Record<string, unknown>> {
    api.authorize('volume_extension:volume_type_encryption:get');
    const t = await this.anyType(id);
    const e = await this.types.getEncryption(this.db, t.id);
    return e ? encryptionView(e) : {};
  }

  async showEncryptionSpec(api: ApiRequest, id: string, key: string): Promise<Record<string, unknown>> {
    api.authorize('volume_extension:volume_type_encryption:get');
    const t = await this.anyType(id);
    const e = await this.types.getEncryption(this.db, t.id);
    const view = e ? encryptionView(e) : null;
    if (!view || !(ENCRYPTION_SPEC_KEYS as readonly string[]).includes(key)) {
      throw new NotFoundError(
        'Encryption spec',
        key,
        `Volume type encryption for type ${id} has no key ${key}.`,
      );
    }
    return { [key]: view[key] };
  }

  async createEncryption(api: ApiRequest, id: string, body: unknown): Promise<Record<string, unknown>> {
    api.authorize('volume_extension:volume_type_encryption:create');
    const t = await this.anyType(id);
    await this.assertNotInUse(t.id);
    const input = parseCreateEncryption(body);
    if (await this.types.getEncryption(this.db, t.id)) {
      throw new InvalidInputError(
        `Invalid volume type: Volume type encryption for type ${t.id} already exists.`,
      );
    }
    const encryptionId = randomUUID();
    await this.types.insertEncryption(this.db, {
      encryptionId,
      volumeTypeId: t.id,
      provider: input.provider,
      cipher: input.cipher ?? null,
      keySize: input.keySize ?? null,
      controlLocation: input.controlLocation,
      now: this.clock.now(),
    });
    return {
      encryption: { ...this.sentEncryptionFields(input), volume_type_id: t.id, encryption_id: encryptionId },
    };
  }

  private sentEncryptionFields(input: {
    provider?: string;
    controlLocation?: string;
    cipher?: string | null;
    keySize?: number | null;
  }): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    if (input.provider !== undefined) out['provider'] = input.provider;
    if (input.controlLocation !== undefined) out['control_location'] = input.controlLocation;
    if (input.cipher !== undefined) out['cipher'] = input.cipher;
    if (input.keySize !== undefined) out['key_size'] = input.keySize;
    return out;
  }

  async updateEncryption(api: ApiRequest, id: string, body: unknown): Promise<Record<string, unknown>> {
    api.authorize('volume_extension:volume_type_encryption:update');
    const t = await this.anyType(id);
    await this.assertNotInUse(t.id);
    const input = parseUpdateEncryption(body);
    if (!(await this.types.getEncryption(this.db, t.id)))
      throw new NotFoundError(
        'Volume type encryption',
        t.id,
        `Volume type encryption for type ${t.id} could not be found.`,
      );
    const set: Record<string, unknown> = {};
    if (input.provider !== undefined) set['provider'] = input.provider;
    if (input.controlLocation !== undefined) set['control_location'] = input.controlLocation;
    if (input.cipher !== undefined) set['cipher'] = input.cipher;
    if (input.keySize !== undefined) set['key_size'] = input.keySize;
    await this.types.updateEncryption(this.db, t.id, set, this.clock.now());
    return { encryption: this.sentEncryptionFields(input) };
  }

  async deleteEncryption(api: ApiRequest, id: string): Promise<void> {
    api.authorize('volume_extension:volume_type_encryption:delete');
    const t = await this.anyType(id);
    await this.assertNotInUse(t.id);
    if (!(await this.types.deleteEncryption(this.db, t.id))) {
      throw new NotFoundError(
        'Volume type encryption',
        t.id,
        `Volume type encryption for type ${t.id} could not be found.`,
      );
    }
  }

  // ---- type access (BS-7.5) ----

  async accessAction(api: ApiRequest, id: string, body: unknown): Promise<void> {
    const action = parseTypeAccessAction(body);
    api.authorize(`volume_extension:volume_type_access:${action.action}`);
    const t = await this.anyType(id);
    if (t.isPublic)
      throw new InvalidInputError(
        'Invalid volume type: Type access modification is not applicable to public volume type.',
      );
    if (action.action === 'addProjectAccess') {
      if (!(await this.types.addAccess(this.db, t.id, action.project, this.clock.now()))) {
        throw new ConflictError(
          `Volume type access for ${t.id}/${action.project} combination already exists.`,
        );
      }
    } else if (!(await this.types.removeAccess(this.db, t.id, action.project))) {
      throw new NotFoundError(
        'Volume type access',
        `${t.id}/${action.project}`,
        `Volume type access not found for ${t.id}/${action.project} combination.`,
      );
    }
  }

  async listAccess(api: ApiRequest, id: string): Promise<Record<string, unknown>> {
    api.authorize('volume_extension:volume_type_access:get_all_for_type');
    const t = await this.anyType(id);
    if (t.isPublic)
      throw new NotFoundError(
        'Volume type access',
        t.id,
        `Volume type access for public volume type ${t.id} could not be found.`,
      );
    const projects = await this.types.listAccess(this.db, t.id);
    return { volume_type_access: projects.map((p) => ({ volume_type_id: t.id, project_id: p })) };
  }

  // ---- default types (BS-7.6) ----

  private assertDefaultTypesApi(api: ApiRequest): void {
    if (!supports(api.mv, 'default-types.api'))
      throw new NotFoundError('resource', 'default-types', 'The resource could not be found.');
  }

  async setDefault(api: ApiRequest, projectId: string, body: unknown): Promise<Record<string, unknown>> {
    this.assertDefaultTypesApi(api);
    api.authorize('volume_extension:default_set_or_update');
    const { volumeType } = parseSetDefaultType(body);
    const t = await this.types.findAny(this.db, volumeType);
    if (!t) throw new InvalidInputError(`Invalid volume type: Volume type ${volumeType} could not be found.`);
    await this.types.setDefault(this.db, projectId, t.id, this.clock.now());
    return { default_type: { project_id: projectId, volume_type_id: t.id } };
  }

  async getDefault(api: ApiRequest, projectId: string): Promise<Record<string, unknown>> {
    this.assertDefaultTypesApi(api);
    api.authorize('volume_extension:default_get');
    const d = await this.types.getDefault(this.db, projectId);
    if (!d)
      throw new NotFoundError(
        'Default type',
        projectId,
        `Default type for project ${projectId} could not be found.`,
      );
    return { default_type: { project_id: d.projectId, volume_type_id: d.volumeTypeId } };
  }

  async listDefaults(api: ApiRequest): Promise<Record<string, unknown>> {
    this.assertDefaultTypesApi(api);
    api.authorize('volume_extension:default_get_all');
    const all = await this.types.listDefaults(this.db);
    return { default_types: all.map((d) => ({ project_id: d.projectId, volume_type_id: d.volumeTypeId })) };
  }

  async unsetDefault(api: ApiRequest, projectId: string): Promise<void> {
    this.assertDefaultTypesApi(api);
    api.authorize('volume_extension:default_unset');
    await this.types.unsetDefault(this.db, projectId);
  }

  /** Whether `all_tenants` was asked by an admin (helper shared with volumes). */
  static allTenants(api: ApiRequest): boolean {
    return api.isAdmin && isTrueish(queryValue(api.query['all_tenants']));
  }
}
