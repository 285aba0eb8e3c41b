import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { parse } from 'yaml';
import { followExecutionEvents } from '../api/event-stream';
import {
  type ActionExecution,
  type Execution,
  type ExecutionEvent,
  type TaskExecution,
  getExecution,
  getTask,
  getWorkflow,
  isTerminal,
  listActionExecutions,
  listTasks,
  rerunTask,
  setExecutionState,
  skipTask,
  subExecutionsOf,
} from '../api/mistral';
import { ExpressionPlayground } from '../components/expression-playground';
import { Gantt } from '../components/gantt';
import { StateBadge } from '../components/state-badge';
import { TaskGraphView } from '../components/task-graph-view';
import { type TaskGraph, taskGraphOf } from '../model/task-graph';
import { type TaskStatus, progressOf, taskStatuses } from '../model/task-states';
import { Link } from '../router';

type StreamState = 'connecting' | 'live' | 'ended' | 'reconnecting';

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));
const pretty = (json: string | undefined | null): string => {
  if (json === undefined || json === null) return '';
  try {
    return JSON.stringify(JSON.parse(json), null, 2);
  } catch {
    return json;
  }
};

/**
 * One execution, live: the whole definition's task graph (tasks not reached yet included) with
 * each task's state as text, fed by the execution's event stream (every entry makes the page read
 * the execution and its tasks again), a timeline, the history, and the control buttons.
 */
export function ExecutionPage({ id }: { id: string }) {
  const [execution, setExecution] = useState<Execution | null>(null);
  const [tasks, setTasks] = useState<TaskExecution[]>([]);
  const [graph, setGraph] = useState<{ graph: TaskGraph | null; error: string | null } | null>(null);
  const [events, setEvents] = useState<ExecutionEvent[]>([]);
  const [children, setChildren] = useState<Map<string, string>>(new Map());
  const [stream, setStream] = useState<StreamState>('connecting');
  const [error, setError] = useState<string | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const [refreshes, setRefreshes] = useState(0);
  const [now, setNow] = useState(Date.now());
  const wake = useRef<() => void>(() => undefined);
  const stateRef = useRef<string | null>(null);

  const refresh = useCallback(async () => {
    try {
      const [ex, ts] = await Promise.all([getExecution(id), listTasks(id)]);
      stateRef.current = ex.state;
      setExecution(ex);
      setTasks(ts);
      setError(null);
      const subs = ts.filter((t) => t.type === 'WORKFLOW');
      if (subs.length > 0) {
        const found = await Promise.all(
          subs.map(async (t) => [t.name, (await subExecutionsOf(t.id))[0]?.id] as const),
        );
        setChildren(new Map(found.filter((f): f is readonly [string, string] => f[1] !== undefined)));
      }
      setRefreshes((n) => n + 1);
    } catch (err) {
      setError(message(err));
    }
  }, [id]);

  // Coalesce bursts of entries into one read.
  const pending = useRef<ReturnType<typeof setTimeout> | null>(null);
  const scheduleRefresh = useCallback(() => {
    if (pending.current) return;
    pending.current = setTimeout(() => {
      pending.current = null;
      void refresh();
    }, 150);
  }, [refresh]);

  useEffect(() => {
    setEvents([]);
    setGraph(null);
    setSelected(null);
    void (async () => {
      await refresh();
      try {
        const ex = await getExecution(id);
        const wf = await getWorkflow(ex.workflow_id);
        setGraph({ graph: taskGraphOf(parse(wf.definition ?? ''), ex.workflow_name), error: null });
      } catch (err) {
        setGraph({ graph: null, error: message(err) });
      }
    })();
  }, [id, refresh]);

  // The event stream: history first, then live entries; after the execution ends, reconnect only
  // when a button changed it (a rerun or resume makes a finished execution run again).
  useEffect(() => {
    const ctrl = new AbortController();
    let last = 0;
    let stopped = false;
    const pause = (ms: number | null) =>
      new Promise<void>((resolve) => {
        const t = ms === null ? undefined : setTimeout(resolve, ms);
        wake.current = () => {
          clearTimeout(t);
          resolve();
        };
      });
    void (async () => {
      while (!stopped) {
        try {
          setStream(last === 0 ? 'connecting' : 'reconnecting');
          await followExecutionEvents(
            id,
            last,
            (e) => {
              if (e.seq <= last) return;
              last = e.seq;
              setStream('live');
              setEvents((es) => [...es, e]);
              scheduleRefresh();
            },
            ctrl.signal,
          );
          if (stopped) return;
          setStream('ended');
          await refresh();
          await pause(stateRef.current !== null && isTerminal(stateRef.current) ? null : 2000);
        } catch {
          if (stopped) return;
          setStream('reconnecting');
          await pause(2000);
        }
      }
    })();
    return () => {
      stopped = true;
      ctrl.abort();
      wake.current();
    };
  }, [id, refresh, scheduleRefresh]);

  const running = execution !== null && !isTerminal(execution.state);
  useEffect(() => {
    if (!running) return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [running]);

  const progress = useMemo(() => progressOf(events.filter((e) => e.execution_id === id)), [events, id]);
  const statuses = useMemo(
    () => (graph?.graph ? taskStatuses(graph.graph, tasks, progress) : []),
    [graph, tasks, progress],
  );

  const act = async (what: () => Promise<unknown>) => {
    setActionError(null);
    try {
      await what();
      await refresh();
      wake.current();
    } catch (err) {
      setActionError(message(err));
    }
  };

  if (error && !execution) return <p role="alert">{error}</p>;
  if (!execution) return <p className="muted">Loading…</p>;
  const selectedStatus = statuses.find((s) => s.name === selected) ?? null;
  return (
    <section>
      <h1>
        Execution <span className="mono">{execution.id}</span>
      </h1>
      <dl className="facts">
        <dt>Workflow</dt>
        <dd>
          <Link to={`/workflows/${execution.workflow_id}`}>{execution.workflow_name}</Link>
        </dd>
        <dt>State</dt>
        <dd data-testid="execution-state">
          <StateBadge state={execution.state} />
        </dd>
        {execution.state_info && (
          <>
            <dt>State info</dt>
            <dd className="mono">{execution.state_info}</dd>
          </>
        )}
        {execution.task_execution_id && execution.root_execution_id && (
          <>
            <dt>Parent</dt>
            <dd>
              <Link to={`/executions/${execution.root_execution_id}`}>root execution</Link>
            </dd>
          </>
        )}
        <dt>Created / updated (UTC)</dt>
        <dd>
          {execution.created_at} / {execution.updated_at ?? '—'}
        </dd>
        <dt>Event stream</dt>
        <dd data-testid="stream-state">{stream}</dd>
      </dl>
      <div className="buttons">
        <button
          type="button"
          disabled={execution.state !== 'RUNNING'}
          onClick={() => void act(() => setExecutionState(id, 'PAUSED'))}
        >
          Pause
        </button>
        <button
          type="button"
          disabled={execution.state !== 'PAUSED'}
          onClick={() => void act(() => setExecutionState(id, 'RUNNING'))}
        >
          Resume
        </button>
        <button
          type="button"
          disabled={execution.state !== 'RUNNING' && execution.state !== 'PAUSED'}
          onClick={() => void act(() => setExecutionState(id, 'CANCELLED'))}
        >
          Cancel
        </button>
        {actionError && <span role="alert">{actionError}</span>}
      </div>

      <div className="two-col">
        <div>
          <h2>Task graph</h2>
          {graph?.graph && (
            <TaskGraphView
              graph={graph.graph}
              statuses={statuses}
              childExecutions={children}
              selected={selected}
              onSelect={setSelected}
            />
          )}
          {graph?.error && <p role="alert">{graph.error}</p>}
          <h2>Tasks</h2>
          <table className="list" aria-label="tasks">
            <thead>
              <tr>
                <th>Task</th>
                <th>State</th>
                <th>Items</th>
                <th>Retries</th>
                <th>Runs</th>
                <th>Started / finished (UTC)</th>
              </tr>
            </thead>
            <tbody>
              {statuses.map((s) => (
                <tr
                  key={s.name}
                  data-testid={`task-row-${s.name}`}
                  className={selected === s.name ? 'selected' : undefined}
                >
                  <td>
                    <button type="button" className="linkish" onClick={() => setSelected(s.name)}>
                      {s.name}
                    </button>
                    {children.get(s.name) && (
                      <>
                        {' '}
                        <Link to={`/executions/${children.get(s.name) ?? ''}`}>sub-workflow</Link>
                      </>
                    )}
                  </td>
                  <td data-testid={`task-state-${s.name}`}>
                    <StateBadge state={s.state} />
                  </td>
                  <td>{s.withItems ? `${s.withItems.done}/${s.withItems.total}` : ''}</td>
                  <td>{s.retryNo > 0 ? s.retryNo : ''}</td>
                  <td>{s.runs}</td>
                  <td>
                    {s.latest?.started_at ?? ''} {s.latest?.finished_at ? `/ ${s.latest.finished_at}` : ''}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <div>
          <TaskPanel executionId={id} status={selectedStatus} refreshes={refreshes} act={act} />
        </div>
      </div>

      <h2>Timeline</h2>
      <Gantt statuses={statuses} now={now} />

      <h2>Event history</h2>
      <table className="list events" aria-label="event history">
        <thead>
          <tr>
            <th>#</th>
            <th>Time (UTC)</th>
            <th>Subject</th>
            <th>Name</th>
            <th>State</th>
            <th>Details</th>
          </tr>
        </thead>
        <tbody>
          {[...events].reverse().map((e) => (
            <tr key={e.seq}>
              <td>{e.seq}</td>
              <td>{e.created_at}</td>
              <td>
                {e.subject}
                {e.execution_id !== id && (
                  <>
                    {' '}
                    <Link to={`/executions/${e.execution_id}`}>(sub-workflow)</Link>
                  </>
                )}
              </td>
              <td>{e.name}</td>
              <td>
                {e.previous_state ? `${e.previous_state} → ` : ''}
                {e.state}
              </td>
              <td className="mono">
                {[
                  e.details.withItems
                    ? `items ${e.details.withItems.done}/${e.details.withItems.total}`
                    : null,
                  e.details.retryNo ? `retry ${e.details.retryNo}` : null,
                  e.details.published?.length ? `published ${e.details.published.join(', ')}` : null,
                  e.details.itemIndex !== undefined ? `item ${e.details.itemIndex}` : null,
                  e.state_info && e.state_info.length > 240 ? `${e.state_info.slice(0, 240)}…` : e.state_info,
                ]
                  .filter(Boolean)
                  .join(' · ')}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** The selected task: its latest run's published values, result and state info, its action executions, rerun and skip. */
function TaskPanel({
  executionId,
  status,
  refreshes,
  act,
}: {
  executionId: string;
  status: TaskStatus | null;
  refreshes: number;
  act: (what: () => Promise<unknown>) => Promise<void>;
}) {
  const [detail, setDetail] = useState<{ task: TaskExecution; actions: ActionExecution[] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const taskId = status?.latest?.id ?? null;
  useEffect(() => {
    if (!taskId) {
      setDetail(null);
      return;
    }
    let stale = false;
    void (async () => {
      try {
        const [task, actions] = await Promise.all([getTask(taskId), listActionExecutions(taskId)]);
        if (!stale) {
          setDetail({ task, actions });
          setError(null);
        }
      } catch (err) {
        if (!stale) setError(message(err));
      }
    })();
    return () => {
      stale = true;
    };
  }, [taskId, refreshes]);

  if (!status) return <p className="muted">Select a task in the graph or the table.</p>;
  return (
    <aside className="panel" aria-label="task panel">
      <h2>
        Task <span className="mono">{status.name}</span>
      </h2>
      <p data-testid="panel-state">
        <StateBadge state={status.state} />
      </p>
      {!status.latest && <p className="muted">Not reached yet.</p>}
      {status.latest && (
        <div className="buttons">
          <button
            type="button"
            disabled={status.state !== 'ERROR'}
            onClick={() => void act(() => rerunTask(status.latest?.id ?? ''))}
          >
            Rerun task
          </button>
          <button
            type="button"
            disabled={status.state !== 'ERROR'}
            onClick={() => void act(() => skipTask(status.latest?.id ?? ''))}
          >
            Skip task
          </button>
        </div>
      )}
      {error && <p role="alert">{error}</p>}
      {detail && detail.task.id === taskId && (
        <>
          {detail.task.state_info && (
            <>
              <h3>State info</h3>
              <pre className="mono wrap">{detail.task.state_info}</pre>
            </>
          )}
          <h3>Published</h3>
          <pre>{pretty(detail.task.published)}</pre>
          <h3>Result</h3>
          <pre>{pretty(detail.task.result)}</pre>
          <h3>Runtime context</h3>
          <pre>{pretty(detail.task.runtime_context)}</pre>
          <h3>Action executions ({detail.actions.length})</h3>
          {detail.actions.map((a) => (
            <details key={a.id} className="action">
              <summary>
                {a.name} <StateBadge state={a.state} />
              </summary>
              <h4>Input</h4>
              <pre>{pretty(a.input)}</pre>
              <h4>Output</h4>
              <pre>{pretty(a.output)}</pre>
              {a.state_info && <pre className="wrap">{a.state_info}</pre>}
            </details>
          ))}
        </>
      )}
      <ExpressionPlayground
        executionId={status.latest?.workflow_execution_id ?? executionId}
        taskExecutionId={status.latest?.id ?? null}
        taskName={status.latest ? status.name : null}
      />
    </aside>
  );
}
