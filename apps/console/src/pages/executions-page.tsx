import { useState } from 'react';
import { EXECUTION_STATES, type ExecutionFilters, listExecutions } from '../api/mistral';
import { StateBadge } from '../components/state-badge';
import { Link } from '../router';
import { usePoll } from '../use-poll';

/** How often the list is read again: there is no project-wide event stream yet. */
const POLL_MS = 2000;

export function ExecutionsPage() {
  const [filters, setFilters] = useState<ExecutionFilters>({});
  const { data, error } = usePoll(() => listExecutions(filters), POLL_MS, [JSON.stringify(filters)]);
  const set = (key: keyof ExecutionFilters) => (e: { target: { value: string } }) => setFilters((f) => ({ ...f, [key]: e.target.value || undefined }));
  return (
    <section>
      <h1>Executions</h1>
      <form className="filters" onSubmit={(e) => e.preventDefault()} aria-label="filters">
        <label>
          State{' '}
          <select value={filters.state ?? ''} onChange={set('state')}>
            <option value="">any</option>
            {EXECUTION_STATES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Workflow <input value={filters.workflow ?? ''} onChange={set('workflow')} placeholder="name contains" />
        </label>
        <label>
          Tags <input value={filters.tags ?? ''} onChange={set('tags')} placeholder="a,b (all of)" />
        </label>
        <label>
          From <input type="datetime-local" value={filters.from ?? ''} onChange={set('from')} />
        </label>
        <label>
          To <input type="datetime-local" value={filters.to ?? ''} onChange={set('to')} />
        </label>
        <span className="muted">updates every {POLL_MS / 1000} s</span>
      </form>
      {error && <p role="alert">{error}</p>}
      {data && (
        <table className="list" aria-label="executions">
          <thead>
            <tr>
              <th>Execution</th>
              <th>Workflow</th>
              <th>State</th>
              <th>Tags</th>
              <th>Created (UTC)</th>
              <th>Updated (UTC)</th>
            </tr>
          </thead>
          <tbody>
            {data.map((e) => (
              <tr key={e.id} data-testid={`execution-row-${e.id}`}>
                <td>
                  <Link to={`/executions/${e.id}`} className="mono">
                    {e.id}
                  </Link>
                  {e.task_execution_id && <span className="muted"> (sub-workflow)</span>}
                </td>
                <td>{e.workflow_name}</td>
                <td>
                  <StateBadge state={e.state} />
                </td>
                <td>{(e.tags ?? []).join(', ')}</td>
                <td>{e.created_at}</td>
                <td>{e.updated_at}</td>
              </tr>
            ))}
            {data.length === 0 && (
              <tr>
                <td colSpan={6} className="muted">
                  No execution matches.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      )}
    </section>
  );
}
