import { type Backup, listBlockStorage } from '../api/block-storage';
import { StateBadge } from '../components/state-badge';
import { usePoll } from '../use-poll';

const POLL_MS = 2000;

/**
 * Volumes, snapshots and backups with their status. Backups show the progress of a running create
 * or restore from our `os-backup-progress:progress` extension; snapshots carry Cinder's
 * `os-extended-snapshot-attributes:progress`, shown as reported.
 */
export function BlockStoragePage({ enabled, noauth }: { enabled: boolean; noauth: boolean }) {
  const { data, error } = usePoll(() => listBlockStorage(noauth), enabled ? POLL_MS : null, [
    enabled,
    noauth,
  ]);
  if (!enabled)
    return (
      <p role="alert">
        Block storage is not configured for this console (CONSOLE_VOLUME_API_URL on the workflow API).
      </p>
    );
  return (
    <section>
      <h1>Block storage</h1>
      <p className="muted">updates every {POLL_MS / 1000} s</p>
      {error && <p role="alert">{error}</p>}
      {data && (
        <>
          <h2>Volumes ({data.volumes.length})</h2>
          <table className="list" aria-label="volumes">
            <thead>
              <tr>
                <th>Name</th>
                <th>ID</th>
                <th>Status</th>
                <th>Size (GiB)</th>
                <th>Type</th>
                <th>Project</th>
                <th>Created</th>
              </tr>
            </thead>
            <tbody>
              {data.volumes.map((v) => (
                <tr key={v.id}>
                  <td>{v.name ?? ''}</td>
                  <td className="mono">{v.id}</td>
                  <td>
                    <StateBadge state={v.status} />
                  </td>
                  <td>{v.size}</td>
                  <td>{v.volume_type ?? ''}</td>
                  <td>{v['os-vol-tenant-attr:tenant_id'] ?? ''}</td>
                  <td>{v.created_at}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <h2>Snapshots ({data.snapshots.length})</h2>
          <table className="list" aria-label="snapshots">
            <thead>
              <tr>
                <th>Name</th>
                <th>ID</th>
                <th>Status</th>
                <th>Progress</th>
                <th>Volume</th>
                <th>Size (GiB)</th>
                <th>Created</th>
              </tr>
            </thead>
            <tbody>
              {data.snapshots.map((s) => (
                <tr key={s.id}>
                  <td>{s.name ?? ''}</td>
                  <td className="mono">{s.id}</td>
                  <td>
                    <StateBadge state={s.status} />
                  </td>
                  <td>{s['os-extended-snapshot-attributes:progress'] ?? ''}</td>
                  <td className="mono">{s.volume_id}</td>
                  <td>{s.size}</td>
                  <td>{s.created_at}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <h2>Backups ({data.backups.length})</h2>
          <table className="list" aria-label="backups">
            <thead>
              <tr>
                <th>Name</th>
                <th>ID</th>
                <th>Status</th>
                <th>Progress</th>
                <th>Incremental</th>
                <th>Volume</th>
                <th>Size (GiB)</th>
                <th>Created</th>
                <th>Failure</th>
              </tr>
            </thead>
            <tbody>
              {data.backups.map((b) => (
                <tr key={b.id}>
                  <td>{b.name ?? ''}</td>
                  <td className="mono">{b.id}</td>
                  <td>
                    <StateBadge state={b.status} />
                  </td>
                  <td>{progressText(b)}</td>
                  <td>{b.is_incremental ? 'yes' : 'no'}</td>
                  <td className="mono">{b.volume_id}</td>
                  <td>{b.size}</td>
                  <td>{b.created_at}</td>
                  <td>{b.fail_reason ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}

/** A running backup's or restore's percent as text; nothing once it is done or before any report. */
function progressText(b: Backup): string {
  const p = b['os-backup-progress:progress'];
  return (b.status === 'creating' || b.status === 'restoring') && typeof p === 'number' ? `${p}%` : '';
}
