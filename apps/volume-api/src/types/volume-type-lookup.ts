import type { DataSource } from 'typeorm';
import { InvalidInputError, NotFoundError } from '@osc/errors';
import { VolumeTypeRepository, type StoredVolumeType } from '@osc/block-storage-persistence';

export const typeNotFound = (id: string): NotFoundError =>
  new NotFoundError('Volume type', id, `Volume type ${id} could not be found.`);

const types = new VolumeTypeRepository();

/** The type `id` whatever its visibility (the admin APIs of types); 404 otherwise. */
export async function loadAnyType(db: DataSource, id: string): Promise<StoredVolumeType> {
  const t = await types.findAny(db, id);
  if (!t) throw typeNotFound(id);
  return t;
}

/** A type's extra specs and encryption change only while no volume uses it (BS-7.3, BS-7.4). */
export async function assertSpecsChangeable(db: DataSource, typeId: string): Promise<void> {
  if (await types.isInUse(db, typeId)) {
    throw new InvalidInputError(
      `Invalid volume type: Type ${typeId} is currently in use by volumes; its specifications cannot change.`,
    );
  }
}
