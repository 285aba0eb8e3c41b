import type { EncryptionValue, VolumeTypeValue } from '../model/resources';
import { formatTimestamp } from './links';

/** Extra-spec keys every caller may see (BS-7.3.5); the rest are admin-only. */
export const USER_VISIBLE_EXTRA_SPECS: readonly string[] = [
  'RESKEY:availability_zones',
  'multiattach',
  'replication_enabled',
];

/** The specs a caller may see. */
export function visibleExtraSpecs(
  specs: Readonly<Record<string, string | null>>,
  isAdmin: boolean,
): Record<string, string | null> {
  if (isAdmin) return { ...specs };
  const out: Record<string, string | null> = {};
  for (const k of USER_VISIBLE_EXTRA_SPECS) if (k in specs) out[k] = specs[k] ?? null;
  return out;
}

/** Show and list items (BS-7.2.2): `qos_specs_id` for admins only. */
export function volumeTypeView(t: VolumeTypeValue, isAdmin: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: t.id,
    name: t.name,
    description: t.description,
    is_public: t.isPublic,
    'os-volume-type-access:is_public': t.isPublic,
    extra_specs: visibleExtraSpecs(t.extraSpecs, isAdmin),
  };
  if (isAdmin) out['qos_specs_id'] = t.qosSpecsId;
  return out;
}

/** Create response: every spec, no qos_specs_id. */
export const volumeTypeCreateView = (t: VolumeTypeValue): Record<string, unknown> => ({
  id: t.id,
  name: t.name,
  description: t.description,
  is_public: t.isPublic,
  'os-volume-type-access:is_public': t.isPublic,
  extra_specs: { ...t.extraSpecs },
});

/** Update response: exactly these five keys (BS-7.2.2; Tempest checks the key set). */
export const volumeTypeUpdateView = (t: VolumeTypeValue): Record<string, unknown> => ({
  id: t.id,
  name: t.name,
  description: t.description,
  is_public: t.isPublic,
  extra_specs: { ...t.extraSpecs },
});

/** `GET /types/{id}/encryption`: the flat object of BS-7.4.1. */
export const encryptionView = (e: EncryptionValue): Record<string, unknown> => ({
  volume_type_id: e.volumeTypeId,
  encryption_id: e.encryptionId,
  provider: e.provider,
  cipher: e.cipher,
  key_size: e.keySize,
  control_location: e.controlLocation,
  created_at: formatTimestamp(e.createdAt),
  updated_at: formatTimestamp(e.updatedAt),
  deleted: false,
  deleted_at: null,
});

/** Field names of `GET /types/{id}/encryption/{key}`. */
export const ENCRYPTION_SPEC_KEYS = [
  'volume_type_id',
  'encryption_id',
  'provider',
  'cipher',
  'key_size',
  'control_location',
] as const;
