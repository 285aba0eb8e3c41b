import type { VolumeValue } from '../model/resources';
import { isJsonObject } from '../validation/primitives';

/**
 * The manifest's `volume_meta` (BS-11.5, BS-11.7): a JSON string, inside the manifest document,
 * describing the backed-up volume so a restore brings back more than its bytes. Version 2 keeps
 * three sections, as Cinder's chunked driver does: `volume-base-metadata` (id, name, description,
 * size, bootable, availability zone), `volume-metadata` (the user metadata) and
 * `volume-glance-metadata` (image properties).
 */
export const VOLUME_META_VERSION = 2;

/** The volume fields a backup records in `volume_meta`. */
export type BackedUpVolume = Pick<
  VolumeValue,
  'id' | 'name' | 'description' | 'size' | 'bootable' | 'availabilityZone' | 'metadata' | 'imageMetadata'
>;

/** `volume_meta` of a backup of `v` (the string the manifest stores). */
export function encodeVolumeMeta(v: BackedUpVolume): string {
  return JSON.stringify({
    version: VOLUME_META_VERSION,
    'volume-base-metadata': {
      id: v.id,
      display_name: v.name,
      display_description: v.description,
      size: v.size,
      bootable: v.bootable,
      availability_zone: v.availabilityZone,
    },
    'volume-metadata': { ...v.metadata },
    'volume-glance-metadata': v.imageMetadata ?? {},
  });
}

/** What a restore takes back from `volume_meta`. */
export interface RestoredVolumeMeta {
  /** The user metadata's string values (merged over the target's own). */
  readonly metadata: Readonly<Record<string, string>>;
  /** The backed-up volume was bootable (a restore never clears the target's flag). */
  readonly bootable: boolean;
  /** Name and description, for a target the restore created itself; null when not recorded as text. */
  readonly name: string | null;
  readonly description: string | null;
}

/**
 * Reads `volume_meta` as written by {@link encodeVolumeMeta} or by another backup service (an
 * imported record). Anything unreadable (not JSON, not an object) is null: the restore brings
 * back the bytes only. Fields of the wrong type are skipped one by one.
 */
export function decodeVolumeMeta(text: string): RestoredVolumeMeta | null {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isJsonObject(doc)) return null;
  const base = doc['volume-base-metadata'];
  const user = doc['volume-metadata'];
  const metadata: Record<string, string> = {};
  if (isJsonObject(user))
    for (const [k, value] of Object.entries(user)) if (typeof value === 'string') metadata[k] = value;
  const field = (key: string): unknown => (isJsonObject(base) ? base[key] : undefined);
  const name = field('display_name');
  const description = field('display_description');
  return {
    metadata,
    bootable: field('bootable') === true,
    name: typeof name === 'string' ? name : null,
    description: typeof description === 'string' ? description : null,
  };
}
