import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  ENCRYPTION_SPEC_KEYS,
  encryptionView,
  parseCreateEncryption,
  parseUpdateEncryption,
} from '@osc/block-storage-domain';
import { InvalidInputError, NotFoundError } from '@osc/errors';
import { VolumeTypeRepository } from '@osc/block-storage-persistence';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { assertSpecsChangeable, loadAnyType } from './volume-type-lookup';

/**
 * Encryption types (spec 7.4): one per volume type, changed only while no volume uses the type;
 * volumes of an encrypted type are encrypted (BS-7.4.4).
 */
@Injectable()
export class VolumeTypeEncryptionService {
  private readonly types = new VolumeTypeRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async showEncryption(api: ApiRequest, id: string): Promise<Record<string, unknown>> {
    api.authorize('volume_extension:volume_type_encryption:get');
    const t = await loadAnyType(this.db, id);
    const e = await this.types.getEncryption(this.db, t.id);
    return e ? encryptionView(e) : {};
  }

  async showEncryptionSpec(api: ApiRequest, id: string, key: string): Promise<Record<string, unknown>> {
    api.authorize('volume_extension:volume_type_encryption:get');
    const t = await loadAnyType(this.db, id);
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
    const t = await loadAnyType(this.db, id);
    await assertSpecsChangeable(this.db, t.id);
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
    const t = await loadAnyType(this.db, id);
    await assertSpecsChangeable(this.db, t.id);
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
    const t = await loadAnyType(this.db, id);
    await assertSpecsChangeable(this.db, t.id);
    if (!(await this.types.deleteEncryption(this.db, t.id))) {
      throw new NotFoundError(
        'Volume type encryption',
        t.id,
        `Volume type encryption for type ${t.id} could not be found.`,
      );
    }
  }
}
