import { useEffect, useRef, useState } from 'react';
import { followExecutionStateChanges } from '../api/event-stream';
import {
  EXECUTION_STATES,
  type Execution,
  type ExecutionFilters,
  type ExecutionStateChange,
  listExecutions,
} from '../api/mistral';
import { StateBadge } from '../components/state-badge';
import { applyStateChange } from '../model/live-executions';
import { Link } from '../router';

type StreamState = 'connecting' | 'live' | 'reconnecting';

/** A new execution may belong in the list: read it again this long after the last such change. */
const RELOAD_DELAY_MS = 200;
const RECONNECT_MS = 2000;

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * The executions list, kept live by the project stream of execution state changes
 * (docs/workflow-events.md): rows change state as changes arrive; the list is read again when
 * the stream (re)opens, when the filters change, and when a change names an execution the page
 * does not show (the list's query decides whether it belongs).
 */
export function ExecutionsPage() {
  const [filters, setFilters] = useState<ExecutionFilters>({});
  const [rows, setRows] = useState<Execution[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [stream, setStream] = useState<StreamState>('connecting');
  const filtersRef = useRef(filters);
  filtersRef.current = filters;
  /** Changes received since each list read in flight started, applied to its answer. */
  const inFlight = useRef(new Set<ExecutionStateChange[]>());
  const reloadTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const generation = useRef(0);

  const load = useRef(async () => {
    const mine = ++generation.current;
    const seen: ExecutionStateChange[] = [];
    inFlight.current.add(seen);
    try {
      const f = filtersRef.current;
      let list = await listExecutions(f);
      if (mine !== generation.current) return;
      for (const c of seen) list = applyStateChange(list, c, f).rows;
      setRows(list);
      setError(null);
    } catch (err) {
      if (mine === generation.current) setError(message(err));
    } finally {
      inFlight.current.delete(seen);
    }
  });

  const scheduleReload = useRef(() => {
    clearTimeout(reloadTimer.current);
    reloadTimer.current = setTimeout(() => void load.current(), RELOAD_DELAY_MS);
  });

  // the stream's opening reads the first list; a change of filters reads it again
  const firstFilters = useRef(true);
  useEffect(() => {
    if (firstFilters.current) {
      firstFilters.current = false;
      return;
    }
    void load.current();
  }, [JSON.stringify(filters)]);

  useEffect(() => {
    const ctrl = new AbortController();
    let stopped = false;
    let last: number | null = null;
    void (async () => {
      while (!stopped) {
        try {
          setStream(last === null ? 'connecting' : 'reconnecting');
          await followExecutionStateChanges(
            { allProjects: false, afterPosition: last },
            (position) => {
              // the first connection starts now: read the list after it, so nothing falls between
              if (last === null) void load.current();
              last = position;
              setStream('live');
            },
            (c) => {
              last = c.position;
              for (const seen of inFlight.current) seen.push(c);
              setRows((current) => {
                if (current === null) return current;
                const { rows: next, reload } = applyStateChange(current, c, filtersRef.current);
                if (reload) scheduleReload.current();
                return next;
              });
            },
            ctrl.signal,
          );
        } catch {
          if (stopped) return;
          setStream('reconnecting');
          await new Promise((r) => setTimeout(r, RECONNECT_MS));
        }
      }
    })();
    return () => {
      stopped = true;
      ctrl.abort();
      clearTimeout(reloadTimer.current);
    };
  }, []);

  const set = (key: keyof ExecutionFilters) => (e: { target: { value: string } }) =>
    setFilters((f) => ({ ...f, [key]: e.target.value || undefined }));
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
          Workflow{' '}
          <input value={filters.workflow ?? ''} onChange={set('workflow')} placeholder="name contains" />
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
        <span className="muted" data-testid="executions-stream">
          {stream === 'live' ? 'live' : stream === 'connecting' ? 'connecting…' : 'reconnecting…'}
        </span>
      </form>
      {error && <p role="alert">{error}</p>}
      {rows && (
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
            {rows.map((e) => (
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
            {rows.length === 0 && (
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
