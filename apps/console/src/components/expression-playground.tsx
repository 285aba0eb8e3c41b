import { useState } from 'react';
import { type EvaluationOutcome, evaluateExpression } from '../api/mistral';
import { caretOf } from '../model/caret';

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * The expression playground: evaluates YAQL or Jinja against the execution's real data as the
 * chosen task sees it (POST /v2/executions/{id}/evaluate). A syntax error is shown with a caret
 * under its position in the text.
 */
export function ExpressionPlayground({
  executionId,
  taskExecutionId,
  taskName,
}: {
  executionId: string;
  taskExecutionId: string | null;
  taskName: string | null;
}) {
  const [expression, setExpression] = useState('');
  const [language, setLanguage] = useState<'yaql' | 'jinja'>('yaql');
  const [outcome, setOutcome] = useState<EvaluationOutcome | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  /** The text the shown outcome is about (the field may have changed since). */
  const [sent, setSent] = useState('');
  const run = async () => {
    setBusy(true);
    try {
      const text = expression;
      setOutcome(
        await evaluateExpression(executionId, {
          expression: text,
          language,
          ...(taskExecutionId ? { task_execution_id: taskExecutionId } : {}),
        }),
      );
      setSent(text);
      setFailure(null);
    } catch (err) {
      setOutcome(null);
      setFailure(message(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="playground" aria-label="expression playground">
      <h3>Expression playground</h3>
      <p className="muted">
        Evaluated against {taskName ? `the context of task ${taskName}` : "the execution's data"}.
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void run();
        }}
      >
        <div className="buttons">
          <label>
            Language{' '}
            <select
              aria-label="expression language"
              value={language}
              onChange={(e) => setLanguage(e.target.value === 'jinja' ? 'jinja' : 'yaql')}
            >
              <option value="yaql">YAQL</option>
              <option value="jinja">Jinja</option>
            </select>
          </label>
          <button type="submit" disabled={busy || expression.trim() === ''}>
            Evaluate
          </button>
        </div>
        <textarea
          aria-label="expression"
          className="mono"
          rows={3}
          value={expression}
          placeholder={language === 'yaql' ? 'task().result' : 'task().result | length'}
          onChange={(e) => setExpression(e.target.value)}
        />
      </form>
      {failure && <p role="alert">{failure}</p>}
      {outcome && 'result' in outcome && (
        <pre data-testid="playground-result">{JSON.stringify(outcome.result, null, 2)}</pre>
      )}
      {outcome && 'error' in outcome && (
        <div data-testid="playground-error">
          <pre className="wrap">{outcome.error.message}</pre>
          {outcome.error.position !== null && <Caret text={sent} position={outcome.error.position} />}
        </div>
      )}
    </section>
  );
}

function Caret({ text, position }: { text: string; position: number }) {
  const c = caretOf(text, position);
  return (
    <>
      <pre className="mono caret" data-testid="playground-caret">{`${c.lineText}\n${c.caret}`}</pre>
      <p className="muted" data-testid="playground-position">
        line {c.line}, column {c.column} (position {position})
      </p>
    </>
  );
}
