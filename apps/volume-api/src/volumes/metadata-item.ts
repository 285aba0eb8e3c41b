import { NotFoundError } from '@osc/errors';

/** Cinder's 404 for a metadata key a volume (snapshot) does not have. */
export const metadataItemNotFound = (owner: 'volume' | 'snapshot', id: string, key: string): NotFoundError =>
  new NotFoundError('Metadata', key, `Metadata item was not found for ${owner} ${id} and key ${key}.`);

/** `GET …/metadata/{key}` of a volume (snapshot): `{"meta": {key: value}}`, 404 without the key. */
export function metadataItemView(
  owner: 'volume' | 'snapshot',
  id: string,
  metadata: Readonly<Record<string, string>>,
  key: string,
): Record<string, unknown> {
  if (!(key in metadata)) throw metadataItemNotFound(owner, id, key);
  return { meta: { [key]: metadata[key] } };
}
