import { getJson } from './http';

/**
 * Block storage through the workflow API's read-only pass-through (`/console/block-storage` →
 * the configured volume API). Project-less v3 URLs (Cinder 3.67) with `all_tenants`, which Cinder
 * honours for admins and ignores for others. In noauth mode Cinder wants a `user:project` token:
 * the console sends `admin:admin` there, as cinderclient's noauth examples do.
 */
const BASE = '/console/block-storage/v3';
const MICROVERSION = { 'OpenStack-API-Version': 'volume 3.67' };

export interface Volume {
  readonly id: string;
  readonly name: string | null;
  readonly status: string;
  readonly size: number;
  readonly volume_type: string | null;
  readonly created_at: string;
  readonly 'os-vol-tenant-attr:tenant_id'?: string;
}

export interface Snapshot {
  readonly id: string;
  readonly name: string | null;
  readonly status: string;
  readonly size: number;
  readonly volume_id: string;
  readonly created_at: string;
  readonly 'os-extended-snapshot-attributes:progress'?: string;
}

export interface Backup {
  readonly id: string;
  readonly name: string | null;
  readonly status: string;
  readonly size: number;
  readonly volume_id: string;
  readonly is_incremental: boolean;
  readonly created_at: string;
  readonly fail_reason: string | null;
  /** Our extension (asked for with `X-OSC-Backup-Progress: true`): percent of a running create or restore. */
  readonly 'os-backup-progress:progress'?: number | null;
}

export interface BlockStorageLists {
  readonly volumes: Volume[];
  readonly snapshots: Snapshot[];
  readonly backups: Backup[];
}

export async function listBlockStorage(noauth: boolean): Promise<BlockStorageLists> {
  const headers = { ...MICROVERSION, ...(noauth ? { 'X-Auth-Token': 'admin:admin' } : {}) };
  const [v, s, b] = await Promise.all([
    getJson<{ volumes: Volume[] }>(`${BASE}/volumes/detail?all_tenants=1&limit=200`, headers),
    getJson<{ snapshots: Snapshot[] }>(`${BASE}/snapshots/detail?all_tenants=1&limit=200`, headers),
    getJson<{ backups: Backup[] }>(`${BASE}/backups/detail?all_tenants=1&limit=200`, {
      ...headers,
      'X-OSC-Backup-Progress': 'true',
    }),
  ]);
  return { volumes: v.volumes, snapshots: s.snapshots, backups: b.backups };
}
