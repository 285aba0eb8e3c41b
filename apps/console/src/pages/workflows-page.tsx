import { useMemo, useState } from 'react';
import { parse } from 'yaml';
import { getWorkflow, listWorkflows, startExecution } from '../api/mistral';
import { TaskGraphView } from '../components/task-graph-view';
import { YamlView } from '../components/yaml-view';
import { taskGraphOf } from '../model/task-graph';
import { Link, navigate } from '../router';
import { usePoll } from '../use-poll';

export function WorkflowsPage() {
  const { data, error } = usePoll(listWorkflows, null, []);
  return (
    <section>
      <h1>Workflows</h1>
      {error && <p role="alert">{error}</p>}
      {!data && !error && <p className="muted">Loading…</p>}
      {data && (
        <table className="list">
          <thead>
            <tr>
              <th>Name</th>
              <th>Namespace</th>
              <th>Tags</th>
              <th>Scope</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            {data.map((w) => (
              <tr key={w.id}>
                <td>
                  <Link to={`/workflows/${w.id}`}>{w.name}</Link>
                </td>
                <td>{w.namespace}</td>
                <td>{w.tags.join(', ')}</td>
                <td>{w.scope}</td>
                <td>{w.created_at}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

export function WorkflowPage({ id }: { id: string }) {
  const { data: wf, error } = usePoll(() => getWorkflow(id), null, [id]);
  const graph = useMemo(() => {
    if (!wf?.definition) return null;
    try {
      return { graph: taskGraphOf(parse(wf.definition), wf.name), error: null };
    } catch (err) {
      return { graph: null, error: err instanceof Error ? err.message : String(err) };
    }
  }, [wf]);
  const [input, setInput] = useState('{}');
  const [startError, setStartError] = useState<string | null>(null);
  const start = async () => {
    setStartError(null);
    try {
      const parsed: unknown = JSON.parse(input || '{}');
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
        throw new Error('The input must be a JSON object.');
      const ex = await startExecution(id, parsed as Record<string, unknown>);
      navigate(`/executions/${ex.id}`);
    } catch (err) {
      setStartError(err instanceof Error ? err.message : String(err));
    }
  };
  if (error) return <p role="alert">{error}</p>;
  if (!wf) return <p className="muted">Loading…</p>;
  return (
    <section>
      <h1>
        Workflow <span className="mono">{wf.name}</span>
      </h1>
      <p className="muted">
        {wf.id} · input {wf.input || '(none)'}
      </p>
      <div className="start-form">
        <label>
          Input (JSON){' '}
          <textarea
            aria-label="execution input"
            value={input}
            onChange={(e) => setInput(e.target.value)}
            rows={2}
            cols={60}
          />
        </label>
        <button type="button" onClick={() => void start()}>
          Start execution
        </button>
        {startError && <p role="alert">{startError}</p>}
      </div>
      <div className="two-col">
        <div>
          <h2>Definition</h2>
          <YamlView text={wf.definition ?? ''} />
        </div>
        <div>
          <h2>Task graph</h2>
          {graph?.graph && <TaskGraphView graph={graph.graph} />}
          {graph?.error && <p role="alert">{graph.error}</p>}
        </div>
      </div>
    </section>
  );
}
