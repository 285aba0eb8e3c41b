import { useEffect, useState } from 'react';
import { type ConsoleConfig, loadConfig, storedToken, storeToken } from './api/http';
import { BlockStoragePage } from './pages/block-storage-page';
import { ExecutionPage } from './pages/execution-page';
import { ExecutionsPage } from './pages/executions-page';
import { WorkflowPage, WorkflowsPage } from './pages/workflows-page';
import { Link, usePath } from './router';

/** Keystone mode: the user's token, kept for this tab only (sessionStorage). */
function TokenField({ onChange }: { onChange: () => void }) {
  const [value, setValue] = useState(storedToken() ?? '');
  return (
    <form
      className="token"
      onSubmit={(e) => {
        e.preventDefault();
        storeToken(value.trim() || null);
        onChange();
      }}
    >
      <label>
        Keystone token{' '}
        <input type="password" value={value} onChange={(e) => setValue(e.target.value)} autoComplete="off" />
      </label>
      <button type="submit">Use token</button>
    </form>
  );
}

function Page({ path, config }: { path: string; config: ConsoleConfig }) {
  const [, section, id] = path.split('/');
  if (section === 'workflows' && id) return <WorkflowPage id={decodeURIComponent(id)} />;
  if (section === 'workflows') return <WorkflowsPage />;
  if (section === 'executions' && id) return <ExecutionPage id={decodeURIComponent(id)} />;
  if (section === 'executions' || !section) return <ExecutionsPage />;
  if (section === 'block-storage')
    return <BlockStoragePage enabled={config.block_storage} noauth={config.auth_mode === 'noauth'} />;
  return <p role="alert">No such page: {path}</p>;
}

export function App() {
  const path = usePath();
  const [config, setConfig] = useState<ConsoleConfig | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [session, setSession] = useState(0);
  useEffect(() => {
    loadConfig().then(setConfig, (err: unknown) =>
      setError(err instanceof Error ? err.message : String(err)),
    );
  }, []);
  const section = path.split('/')[1] || 'executions';
  return (
    <>
      <header>
        <strong>Operator console</strong>
        <nav>
          {(
            [
              ['workflows', 'Workflows'],
              ['executions', 'Executions'],
              ['block-storage', 'Block storage'],
            ] as const
          ).map(([to, label]) => (
            <Link key={to} to={`/${to}`} className={section === to ? 'active' : undefined}>
              {label}
            </Link>
          ))}
        </nav>
        {config?.auth_mode === 'keystone' && <TokenField onChange={() => setSession((s) => s + 1)} />}
      </header>
      <main>
        {error && <p role="alert">{error}</p>}
        {config && <Page key={`${path}#${session}`} path={path} config={config} />}
      </main>
    </>
  );
}
