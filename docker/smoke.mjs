// Smoke test of a running distributed stack (docker/compose.yaml, a cluster behind port-forwards, or
// processes on this machine), through the public HTTP APIs only:
//   node docker/smoke.mjs
// Variables: OSC_SMOKE_HOST (127.0.0.1), OSC_WORKFLOW_API_PORT (8989), OSC_VOLUME_API_PORT (8776),
// OSC_WORKFLOW_ENGINE_PORT (9101), OSC_CRON_SCHEDULER_PORT (9102), OSC_SCHEDULER_STATS_PORT (9103),
// OSC_BACKUP_WORKER_PORT (9104), OSC_SMOKE_HTTP_TARGET (the URL the engine's std.http calls;
// default http://workflow-api:8989/, the workflow API as the apps' network names it).
// Checks: every app's /readyz and /metrics; a workflow with std.echo and std.http ends SUCCESS; a
// volume becomes available and its backup too. Prints one JSON line; exit status 1 on a failure.
const host = process.env.OSC_SMOKE_HOST ?? '127.0.0.1';
const port = (name, dflt) => Number(process.env[name] ?? dflt);
const apps = {
  'workflow-api': port('OSC_WORKFLOW_API_PORT', 8989),
  'volume-api': port('OSC_VOLUME_API_PORT', 8776),
  'workflow-engine': port('OSC_WORKFLOW_ENGINE_PORT', 9101),
  'cron-scheduler': port('OSC_CRON_SCHEDULER_PORT', 9102),
  'scheduler-stats': port('OSC_SCHEDULER_STATS_PORT', 9103),
  'backup-worker': port('OSC_BACKUP_WORKER_PORT', 9104),
};
const target = process.env.OSC_SMOKE_HTTP_TARGET ?? 'http://workflow-api:8989/';
// noauth: the token is `user:project`; Cinder's URL needs a hex project id.
const project = 'a5e0c0de0b0e4c1d9e8f7a6b5c4d3e2f';
const headers = { 'x-auth-token': `smoke:${project}`, 'content-type': 'application/json' };
const wf = `http://${host}:${apps['workflow-api']}`;
const vol = `http://${host}:${apps['volume-api']}/v3/${project}`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const steps = [];

async function step(name, fn) {
  const t0 = Date.now();
  await fn();
  steps.push({ step: name, ms: Date.now() - t0 });
}

async function request(method, url, body, type = 'application/json') {
  const res = await fetch(url, { method, headers: { ...headers, 'content-type': type }, body });
  const text = await res.text();
  return {
    status: res.status,
    body: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text,
  };
}

async function until(what, fn, timeoutMs = 180_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await sleep(500);
  }
}

function expectStatus(what, res, status) {
  if (res.status !== status)
    throw new Error(
      `${what}: expected ${status}, got ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`,
    );
}

try {
  await step('ready', async () => {
    for (const [app, p] of Object.entries(apps)) {
      await until(
        `${app} /readyz`,
        async () => (await fetch(`http://${host}:${p}/readyz`).catch(() => ({ status: 0 }))).status === 200,
      );
      const metrics = await (await fetch(`http://${host}:${p}/metrics`)).text();
      if (!metrics.includes(`app="${app}"`)) throw new Error(`${app} /metrics does not name the app`);
    }
  });
  await step('workflow', async () => {
    const name = `smoke_${Date.now()}`;
    const definition = `version: '2.0'\n${name}:\n  tasks:\n    echo:\n      action: std.echo output=1\n      on-success: [call]\n    call:\n      action: std.http\n      input:\n        url: ${target}\n`;
    expectStatus(
      'create workflow',
      await request('POST', `${wf}/v2/workflows`, definition, 'text/plain'),
      201,
    );
    const ex = await request('POST', `${wf}/v2/executions`, JSON.stringify({ workflow_name: name }));
    expectStatus('start execution', ex, 201);
    await until('execution SUCCESS', async () => {
      const { body } = await request('GET', `${wf}/v2/executions/${ex.body.id}`);
      if (body.state === 'ERROR') throw new Error(`execution failed: ${body.state_info}`);
      return body.state === 'SUCCESS';
    });
  });
  await step('volume and backup', async () => {
    const v = await request('POST', `${vol}/volumes`, JSON.stringify({ volume: { size: 1, name: 'smoke' } }));
    expectStatus('create volume', v, 202);
    const id = v.body.volume.id;
    await until('volume available', async () => {
      const { body } = await request('GET', `${vol}/volumes/${id}`);
      if (body.volume.status === 'error') throw new Error('volume in error');
      return body.volume.status === 'available';
    });
    const b = await request(
      'POST',
      `${vol}/backups`,
      JSON.stringify({ backup: { volume_id: id, name: 'smoke' } }),
    );
    expectStatus('create backup', b, 202);
    await until('backup available', async () => {
      const { body } = await request('GET', `${vol}/backups/${b.body.backup.id}`);
      if (body.backup.status === 'error') throw new Error(`backup in error: ${body.backup.fail_reason}`);
      return body.backup.status === 'available';
    });
  });
  process.stdout.write(`${JSON.stringify({ smoke: 'passed', steps })}\n`);
} catch (err) {
  process.stdout.write(`${JSON.stringify({ smoke: 'failed', steps, error: String(err?.message ?? err) })}\n`);
  process.exitCode = 1;
}
