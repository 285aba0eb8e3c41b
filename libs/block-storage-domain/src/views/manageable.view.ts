import { InvalidInputError } from '@osc/errors';
import type { Paging } from '../lists/list-query';

/** One object a back end could manage (`GET /manageable_volumes`, `/manageable_snapshots`, 3.8). */
export interface ManageableEntry {
  readonly reference: Readonly<Record<string, string>>;
  /** GiB, rounded up. */
  readonly size: number;
  readonly safeToManage: boolean;
  readonly reasonNotSafe: string | null;
  /** The id of the volume (snapshot) that already manages it. */
  readonly cinderId: string | null;
  /** Snapshots only: the reference of the volume the snapshot was taken of. */
  readonly sourceReference?: Readonly<Record<string, string>>;
}

/** Sort keys Cinder accepts on the manageable lists. */
export const MANAGEABLE_SORT_KEYS = ['reference', 'size'] as const;

/** Summary: reference, size, safe_to_manage (and source_reference for snapshots); detail adds the rest. */
export function manageableView(e: ManageableEntry, detail: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {
    reference: { ...e.reference },
    size: e.size,
    safe_to_manage: e.safeToManage,
  };
  if (e.sourceReference !== undefined) out['source_reference'] = { ...e.sourceReference };
  if (detail) {
    out['reason_not_safe'] = e.reasonNotSafe;
    out['cinder_id'] = e.cinderId;
    out['extra_info'] = null;
  }
  return out;
}

const referenceText = (e: ManageableEntry): string =>
  e.reference['source-name'] ?? JSON.stringify(e.reference);

/**
 * Sorts (default: reference, descending, as Cinder), then starts after the entry whose reference
 * is `marker` (400 when none is), skips `offset` and keeps `limit` entries.
 */
export function pageManageable(entries: readonly ManageableEntry[], paging: Paging): ManageableEntry[] {
  const keys = paging.sort.length > 0 ? paging.sort : [{ key: 'reference', dir: 'desc' as const }];
  const sorted = [...entries].sort((a, b) => {
    for (const { key, dir } of keys) {
      const c =
        key === 'size'
          ? a.size - b.size
          : referenceText(a) < referenceText(b)
            ? -1
            : referenceText(a) > referenceText(b)
              ? 1
              : 0;
      if (c !== 0) return dir === 'asc' ? c : -c;
    }
    return 0;
  });
  let start = 0;
  if (paging.marker !== null) {
    const at = sorted.findIndex((e) => referenceText(e) === paging.marker);
    if (at < 0)
      throw new InvalidInputError(`Invalid input received: marker not found: ${paging.marker.slice(0, 100)}`);
    start = at + 1;
  }
  return sorted.slice(start + paging.offset, start + paging.offset + paging.limit);
}
