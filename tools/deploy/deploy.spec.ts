import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import * as backupWorker from '@osc/backup-worker';
import * as cronScheduler from '@osc/cron-scheduler';
import { ConfigError, type Env } from '@osc/http-common';
import * as schedulerStats from '@osc/scheduler-stats';
import * as volumeApi from '@osc/volume-api';
import * as workflowApi from '@osc/workflow-api';
import * as workflowEngine from '@osc/workflow-engine';
import { loadMigrateConfig } from '../../apps/embedded/src/migrate';

/**
 * Static checks of docker/ and k8s/ against the code: no Docker engine or cluster is needed. Each
 * Deployment's environment (ConfigMaps + Secrets with their placeholders) is fed to that app's own
 * configuration loaders, so a renamed variable or port breaks this test, not a rollout.
 */

const ROOT = path.resolve(__dirname, '../..');
const K8S = path.join(ROOT, 'k8s/base');
const OVERLAYS = path.join(ROOT, 'k8s/overlays');

/** Each app's loaders (everything its main.ts parses) and the port that serves /healthz, /readyz, /metrics. */
const APPS: Record<
  string,
  { load(env: Env): unknown; port(env: Env): number; http: boolean; replicas: number }
> = {
  'workflow-api': {
    load: (env) => [workflowApi.loadConfig(env), workflowApi.loadInfraConfig(env)],
    port: (env) => workflowApi.loadConfig(env).http.port,
    http: true,
    replicas: 2,
  },
  'volume-api': {
    load: (env) => [volumeApi.loadConfig(env), volumeApi.loadInfraConfig(env)],
    port: (env) => volumeApi.loadConfig(env).http.port,
    http: true,
    replicas: 2,
  },
  'workflow-engine': {
    load: (env) => [workflowEngine.loadConfig(env), workflowEngine.loadInfraConfig(env)],
    port: (env) => workflowEngine.loadConfig(env).health.port,
    http: false,
    replicas: 2,
  },
  'cron-scheduler': {
    load: (env) => [cronScheduler.loadConfig(env), cronScheduler.loadInfraConfig(env)],
    port: (env) => cronScheduler.loadConfig(env).health.port,
    http: false,
    replicas: 2,
  },
  'scheduler-stats': {
    load: (env) => [schedulerStats.loadConfig(env), schedulerStats.loadInfraConfig(env)],
    port: (env) => schedulerStats.loadConfig(env).health.port,
    http: false,
    replicas: 2,
  },
  'backup-worker': {
    load: (env) => [backupWorker.loadConfigs(env), backupWorker.loadInfraConfig(env)],
    port: (env) => backupWorker.loadConfig(env).health.port,
    http: false,
    replicas: 1,
  },
};

// ---------------------------------------------------------------------------------------------
// Manifests

type Obj = Record<string, any>;
interface Manifest {
  file: string;
  kind: string;
  name: string;
  namespace?: string;
  body: Obj;
}

function readYamlDocs(file: string): Obj[] {
  const docs = parseAllDocuments(readFileSync(file, 'utf8'));
  const list = Array.isArray(docs) ? docs : [docs];
  return list.flatMap((d) => {
    if (d.errors.length > 0) throw new Error(`${file}: ${d.errors.map((e) => e.message).join('; ')}`);
    const js = d.toJS() as Obj | null;
    return js ? [js] : [];
  });
}

const kustomization = readYamlDocs(path.join(K8S, 'kustomization.yaml'))[0] as Obj;
const resourceFiles: string[] = kustomization['resources'] ?? [];
const manifests: Manifest[] = resourceFiles
  .filter((f) => existsSync(path.join(K8S, f)))
  .flatMap((f) =>
    readYamlDocs(path.join(K8S, f)).map((body) => ({
      file: f,
      kind: body['kind'],
      name: body['metadata']?.['name'],
      namespace: body['metadata']?.['namespace'],
      body,
    })),
  );
const ofKind = (kind: string) => manifests.filter((m) => m.kind === kind);
const find = (kind: string, name: string, objs: Manifest[] = manifests) =>
  objs.find((m) => m.kind === kind && m.name === name);
const deployments = ofKind('Deployment');
const asManifests = (objects: Obj[]): Manifest[] =>
  objects.map((body) => ({
    file: '(rendered)',
    kind: body['kind'],
    name: body['metadata']?.['name'],
    namespace: body['metadata']?.['namespace'],
    body,
  }));
const containerOf = (d: Manifest): Obj => d.body['spec']['template']['spec']['containers'][0];

/** ConfigMap data, or Secret stringData/data (base64), by name. */
function sourceData(
  kind: 'ConfigMap' | 'Secret',
  name: string,
  objs: Manifest[] = manifests,
): Record<string, string> {
  const m = find(kind, name, objs);
  if (!m) throw new Error(`${kind} ${name} is referenced but not in the kustomization`);
  if (kind === 'ConfigMap')
    return Object.fromEntries(Object.entries(m.body['data'] ?? {}).map(([k, v]) => [k, String(v)]));
  const decoded = Object.entries(m.body['data'] ?? {}).map(([k, v]) => [
    k,
    Buffer.from(String(v), 'base64').toString('utf8'),
  ]);
  return {
    ...Object.fromEntries(decoded),
    ...Object.fromEntries(Object.entries(m.body['stringData'] ?? {}).map(([k, v]) => [k, String(v)])),
  };
}

/** The environment a container gets: envFrom in order, then env (which wins), as the kubelet does. */
function containerEnv(c: Obj, objs: Manifest[] = manifests): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of c['envFrom'] ?? []) {
    const prefix: string = from['prefix'] ?? '';
    const data = from['configMapRef']
      ? sourceData('ConfigMap', from['configMapRef']['name'], objs)
      : sourceData('Secret', from['secretRef']['name'], objs);
    for (const [k, v] of Object.entries(data)) env[prefix + k] = v;
  }
  for (const e of c['env'] ?? []) {
    if ('value' in e) env[e['name']] = String(e['value']);
    else if (e['valueFrom']?.['configMapKeyRef']) {
      const ref = e['valueFrom']['configMapKeyRef'];
      const value = sourceData('ConfigMap', ref['name'], objs)[ref['key']];
      if (value === undefined) throw new Error(`ConfigMap ${ref['name']} has no key ${ref['key']}`);
      env[e['name']] = value;
    } else if (e['valueFrom']?.['secretKeyRef']) {
      const ref = e['valueFrom']['secretKeyRef'];
      const value = sourceData('Secret', ref['name'], objs)[ref['key']];
      if (value === undefined) throw new Error(`Secret ${ref['name']} has no key ${ref['key']}`);
      env[e['name']] = value;
    } else throw new Error(`env ${e['name']}: unsupported source (extend this test)`);
  }
  return env;
}

// ---------------------------------------------------------------------------------------------
// Which variables an app reads

type Outcome = { ok: true; value: string } | { ok: false; problems: string[] };

function outcome(app: string, env: Env): Outcome {
  try {
    return { ok: true, value: JSON.stringify(APPS[app]!.load(env)) };
  } catch (err) {
    if (err instanceof ConfigError) return { ok: false, problems: [...err.problems] };
    return { ok: false, problems: [String(err)] };
  }
}

const PROBES = ['zz-probe', '123456789', 'http://probe.invalid/x'];

/**
 * Whether `app` reads `key`: its configuration changes, or is refused naming `key`, when the
 * variable is removed or set to a probe value. The schemas drop unknown keys silently, so this
 * is the only way to tell a misspelt variable from a real one without exporting the schemas.
 */
function reads(app: string, env: Env, key: string): boolean {
  const without: Record<string, string | undefined> = { ...env };
  delete without[key];
  const names = (o: Outcome) => !o.ok && o.problems.some((p) => p.startsWith(`${key}:`));
  const base = outcome(app, without);
  if (!base.ok) return names(base);
  const given = outcome(app, env);
  if (given.ok && given.value !== base.value) return true;
  return PROBES.some((probe) => {
    const o = outcome(app, { ...without, [key]: probe });
    return o.ok ? o.value !== base.value : names(o);
  });
}

// ---------------------------------------------------------------------------------------------
// Dockerfile and .dockerignore

interface Instruction {
  stage: number;
  op: string;
  args: string;
}

function dockerfile(): { instructions: Instruction[]; stages: string[]; args: Record<string, string> } {
  const text = readFileSync(path.join(ROOT, 'docker/Dockerfile'), 'utf8');
  const logical: string[] = [];
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (current === '' && (line.trim() === '' || line.trim().startsWith('#'))) continue;
    if (line.endsWith('\\')) current += line.slice(0, -1) + ' ';
    else {
      logical.push(current + line);
      current = '';
    }
  }
  const instructions: Instruction[] = [];
  const stages: string[] = [];
  const args: Record<string, string> = {};
  for (const l of logical) {
    const m = /^\s*([A-Za-z]+)\s+(.*)$/.exec(l);
    if (!m) throw new Error(`unparsed Dockerfile line: ${l}`);
    const op = m[1]!.toUpperCase();
    const rest = m[2]!.trim();
    if (op === 'FROM') stages.push(/\sAS\s+(\S+)$/i.exec(rest)?.[1] ?? `#${stages.length}`);
    if (op === 'ARG' && stages.length === 0) {
      const [k, v] = rest.split('=');
      args[k!] = v ?? '';
    }
    instructions.push({ stage: stages.length - 1, op, args: rest });
  }
  return { instructions, stages, args };
}

/** Docker's rule: the last pattern matching the path or one of its parent directories decides. */
function dockerignore(): (file: string) => boolean {
  const rules = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const negate = l.startsWith('!');
      const pattern = path.posix.normalize((negate ? l.slice(1) : l).replace(/^\/+/, '')).replace(/\/$/, '');
      let re = '';
      for (let i = 0; i < pattern.length; i++) {
        const ch = pattern[i]!;
        if (pattern.startsWith('**/', i)) {
          re += '(?:.*/)?';
          i += 2;
        } else if (pattern.startsWith('**', i)) {
          re += '.*';
          i += 1;
        } else if (ch === '*') re += '[^/]*';
        else if (ch === '?') re += '[^/]';
        else re += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
      }
      return { negate, re: new RegExp(`^${re}$`) };
    });
  return (file) => {
    const parts = file.split('/');
    const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
    let excluded = false;
    for (const rule of rules) if (prefixes.some((p) => rule.re.test(p))) excluded = !rule.negate;
    return !excluded;
  };
}

/** Every repository file an app's main.ts loads at run time (relative imports and @osc/* aliases). */
function runtimeFiles(main: string): Set<string> {
  const aliases = JSON.parse(readFileSync(path.join(ROOT, 'tsconfig.base.json'), 'utf8')).compilerOptions
    .paths as Record<string, string[]>;
  const seen = new Set<string>();
  const resolveFile = (base: string): string | undefined =>
    [base, `${base}.ts`, `${base}.js`, `${base}.json`, path.join(base, 'index.ts')].find(
      (p) => existsSync(p) && statSync(p).isFile(),
    );
  const queue = [path.join(ROOT, main)];
  while (queue.length > 0) {
    const file = queue.pop()!;
    const rel = path.relative(ROOT, file);
    if (seen.has(rel)) continue;
    seen.add(rel);
    if (!/\.(ts|js)$/.test(file)) continue;
    const text = readFileSync(file, 'utf8');
    const specs = [...text.matchAll(/(?:from|import|require\()\s*['"]([^'"]+)['"]/g)].map((m) => m[1]!);
    for (const spec of specs) {
      let target: string | undefined;
      if (spec.startsWith('.')) target = resolveFile(path.resolve(path.dirname(file), spec));
      else if (aliases[spec]) target = path.join(ROOT, aliases[spec]![0]!);
      else continue; // a package: node_modules comes from npm ci
      if (!target) throw new Error(`${rel}: cannot resolve ${spec}`);
      queue.push(target);
    }
    // Files loaded by path next to the module (e.g. a worker script).
    for (const m of text.matchAll(/__dirname,\s*['"]([^'"]+)['"]/g)) {
      // build outputs (the console's dist/console) are made by the image's build stage, not sent
      if (/(^|\/)dist\//.test(m[1]!)) continue;
      const target = resolveFile(path.join(path.dirname(file), m[1]!));
      if (!target) throw new Error(`${rel}: cannot find ${m[1]}`);
      queue.push(target);
    }
  }
  return seen;
}

// ---------------------------------------------------------------------------------------------

describe('k8s manifests', () => {
  it('kustomization lists every manifest file of k8s/, and each exists and parses', () => {
    const onDisk = readdirSync(K8S).filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml');
    expect([...resourceFiles].sort()).toEqual(onDisk.sort());
    for (const f of resourceFiles) expect(existsSync(path.join(K8S, f))).toBe(true);
    expect(manifests.length).toBeGreaterThan(10);
    for (const m of manifests) {
      expect(typeof m.kind).toBe('string');
      expect(typeof m.name).toBe('string');
    }
  });

  it('every resource is in the namespace the kustomization and the Namespace name', () => {
    const ns = ofKind('Namespace');
    expect(ns.map((n) => n.name)).toEqual([kustomization['namespace']]);
    for (const m of manifests.filter((x) => x.kind !== 'Namespace'))
      expect(`${m.kind}/${m.name} in ${m.namespace}`).toBe(
        `${m.kind}/${m.name} in ${kustomization['namespace']}`,
      );
  });

  it('has one Deployment per app, named after it, running it from the image', () => {
    expect(deployments.map((d) => d.name).sort()).toEqual(Object.keys(APPS).sort());
    for (const d of deployments) {
      expect(d.body['spec']['template']['spec']['containers']).toHaveLength(1);
      const c = containerOf(d);
      expect(c['args']).toEqual([d.name]);
      expect(existsSync(path.join(ROOT, 'apps', d.name, 'src/main.ts'))).toBe(true);
      const image = String(c['image']).split(':')[0];
      expect((kustomization['images'] as Obj[]).map((i) => i['name'])).toContain(image);
    }
  });

  it('sets the replicas decided per app (APIs and engine 2, backup-worker 1 per back-end host)', () => {
    for (const d of deployments)
      expect(`${d.name}: ${d.body['spec']['replicas']}`).toBe(`${d.name}: ${APPS[d.name]!.replicas}`);
  });

  it.each(Object.keys(APPS))('%s: the container environment parses with its own config loaders', (app) => {
    const d = find('Deployment', app)!;
    const env = containerEnv(containerOf(d));
    const o = outcome(app, env);
    expect(o).toMatchObject({ ok: true });
    // Distributed mode needs all three, from a Secret.
    for (const k of ['DATABASE_URL', 'AMQP_URL', 'REDIS_URL']) expect(Object.keys(env)).toContain(k);
  });

  it.each(Object.keys(APPS))('%s: every variable it gets is one the app reads', (app) => {
    const env = containerEnv(containerOf(find('Deployment', app)!));
    const unread = Object.keys(env).filter((k) => !reads(app, env, k));
    expect(unread).toEqual([]);
  });

  it('the variable check tells a renamed variable from a real one', () => {
    const env = containerEnv(containerOf(find('Deployment', 'volume-api')!));
    expect(reads('volume-api', env, 'VOLUME_API_PORT')).toBe(true);
    expect(reads('volume-api', env, 'KEYSTONE_PASSWORD')).toBe(true);
    expect(reads('volume-api', { ...env, VOLUME_API_LISTEN_PORT: '8776' }, 'VOLUME_API_LISTEN_PORT')).toBe(
      false,
    );
    expect(reads('workflow-engine', { ...env, VOLUME_API_PORT: '8776' }, 'VOLUME_API_PORT')).toBe(false);
  });

  it.each(Object.keys(APPS))('%s: container port and probes use the port the app listens on', (app) => {
    const d = find('Deployment', app)!;
    const c = containerOf(d);
    const port = APPS[app]!.port(containerEnv(c));
    const ports: Obj[] = c['ports'];
    expect(ports.map((p) => p['containerPort'])).toEqual([port]);
    const resolve = (p: number | string) =>
      typeof p === 'number' ? p : ports.find((x) => x['name'] === p)?.['containerPort'];
    const probes: Record<string, string> = {
      startupProbe: '/healthz',
      livenessProbe: '/healthz',
      readinessProbe: '/readyz',
    };
    for (const [probe, probePath] of Object.entries(probes)) {
      expect(c[probe]?.['httpGet']?.['path']).toBe(probePath);
      expect(resolve(c[probe]['httpGet']['port'])).toBe(port);
    }
    const annotations = d.body['spec']['template']['metadata']['annotations'] ?? {};
    if (annotations['prometheus.io/port']) expect(Number(annotations['prometheus.io/port'])).toBe(port);
  });

  it.each(Object.keys(APPS))('%s: resources, non-root security context and a writable /tmp', (app) => {
    const d = find('Deployment', app)!;
    const pod = d.body['spec']['template']['spec'];
    const c = containerOf(d);
    for (const section of ['requests', 'limits'])
      for (const r of ['cpu', 'memory']) expect(c['resources']?.[section]?.[r]).toBeDefined();
    expect(pod['securityContext']['runAsNonRoot']).toBe(true);
    expect(pod['securityContext']['runAsUser']).toBeGreaterThan(0);
    expect(c['securityContext']['allowPrivilegeEscalation']).toBe(false);
    if (c['securityContext']['readOnlyRootFilesystem'])
      expect((c['volumeMounts'] ?? []).map((m: Obj) => m['mountPath'])).toContain('/tmp');
    expect(d.body['spec']['selector']['matchLabels']).toMatchObject({ 'app.kubernetes.io/name': app });
    expect(d.body['spec']['template']['metadata']['labels']).toMatchObject(
      d.body['spec']['selector']['matchLabels'],
    );
  });

  it('Services exist for the two APIs, select their pods and expose the API port', () => {
    const services = ofKind('Service');
    expect(services.map((s) => s.name).sort()).toEqual(['volume-api', 'workflow-api']);
    for (const s of services) {
      const d = find('Deployment', s.name)!;
      const labels = d.body['spec']['template']['metadata']['labels'];
      const selector: Record<string, string> = s.body['spec']['selector'];
      expect(Object.keys(selector).length).toBeGreaterThan(0);
      for (const [k, v] of Object.entries(selector)) expect(labels[k]).toBe(v);
      // The selector picks no other Deployment's pods.
      const others = deployments.filter(
        (o) =>
          o !== d &&
          Object.entries(selector).every(
            ([k, v]) => o.body['spec']['template']['metadata']['labels'][k] === v,
          ),
      );
      expect(others).toEqual([]);
      const c = containerOf(d);
      const port = APPS[s.name]!.port(containerEnv(c));
      const sp: Obj = s.body['spec']['ports'][0];
      expect(sp['port']).toBe(port);
      const target = sp['targetPort'];
      expect(
        typeof target === 'number'
          ? target
          : c['ports'].find((p: Obj) => p['name'] === target)?.['containerPort'],
      ).toBe(port);
    }
  });

  it('PodDisruptionBudgets and HorizontalPodAutoscalers cover the APIs and the engine', () => {
    for (const api of ['workflow-api', 'volume-api', 'workflow-engine']) {
      const d = find('Deployment', api)!;
      const labels = d.body['spec']['template']['metadata']['labels'];
      const pdb = ofKind('PodDisruptionBudget').find((p) =>
        Object.entries(p.body['spec']['selector']['matchLabels']).every(([k, v]) => labels[k] === v),
      );
      expect(pdb).toBeDefined();
      const minAvailable = pdb!.body['spec']['minAvailable'];
      expect(typeof minAvailable === 'number' && minAvailable < d.body['spec']['replicas']).toBe(true);
      const hpa = ofKind('HorizontalPodAutoscaler').find(
        (h) => h.body['spec']['scaleTargetRef']['name'] === api,
      );
      expect(hpa?.body['spec']['scaleTargetRef']['kind']).toBe('Deployment');
      expect(hpa!.body['spec']['minReplicas']).toBeGreaterThanOrEqual(d.body['spec']['replicas']);
    }
    for (const h of ofKind('HorizontalPodAutoscaler'))
      expect(find('Deployment', h.body['spec']['scaleTargetRef']['name'])).toBeDefined();
  });

  it('backup-worker keeps its back end identity and its directories on persistent volumes', () => {
    const d = find('Deployment', 'backup-worker')!;
    const pod = d.body['spec']['template']['spec'];
    const c = containerOf(d);
    const env = containerEnv(c);
    const configs = backupWorker.loadConfigs(env);
    // The back end's name must not change with the pod name, nor two pods serve it at once.
    expect(d.body['spec']['strategy']['type']).toBe('Recreate');
    expect(env['VOLUME_BACKEND_HOST']).toBeDefined();
    expect(pod['hostname']).toBe(env['VOLUME_BACKEND_HOST']);
    const claimOf = (dir: string): Manifest => {
      const mount = (c['volumeMounts'] as Obj[]).find(
        (m) => dir === m['mountPath'] || dir.startsWith(`${m['mountPath']}/`),
      );
      expect(mount).toBeDefined();
      const volume = (pod['volumes'] as Obj[]).find((v) => v['name'] === mount!['name']);
      const claim = find('PersistentVolumeClaim', volume?.['persistentVolumeClaim']?.['claimName']);
      expect(claim).toBeDefined();
      return claim!;
    };
    for (const cfg of configs) claimOf(cfg.volumeBackend.directory);
    const backupStore = configs[0]!.backup.store;
    expect(backupStore.driver).toBe('posix');
    const store = claimOf(backupStore.driver === 'posix' ? backupStore.directory : '');
    // Restores run on the target volume's back end: the store is shared by every back-end host.
    expect(store.body['spec']['accessModes']).toContain('ReadWriteMany');
  });

  it('placeholders in the Secrets are marked change-me', () => {
    for (const s of ofKind('Secret'))
      for (const v of Object.values(sourceData('Secret', s.name))) expect(v).toContain('change-me');
  });
});

describe('docker/Dockerfile', () => {
  const { instructions, stages, args } = dockerfile();
  const included = dockerignore();
  const last = stages.length - 1;

  it('builds from Node 20 slim, installs with npm ci from the lockfile', () => {
    const froms = instructions
      .filter((i) => i.op === 'FROM')
      .map((i) => i.args.split(/\s+/)[0]!.replace(/^\$\{?(\w+)\}?$/, (_, a: string) => args[a] ?? ''));
    expect(froms.length).toBeGreaterThanOrEqual(2);
    for (const f of froms) expect(f).toMatch(/^node:20(\.[\d.]+)?-(bookworm-)?slim$/);
    const runs = instructions.filter((i) => i.op === 'RUN').map((i) => i.args);
    expect(runs.some((r) => /\bnpm ci\b/.test(r))).toBe(true);
    const depsCopies = instructions.filter(
      (i) =>
        i.op === 'COPY' &&
        i.stage === instructions.find((x) => x.op === 'RUN' && /\bnpm ci\b/.test(x.args))!.stage,
    );
    const copied = depsCopies.flatMap((i) =>
      i.args
        .split(/\s+/)
        .filter((a) => !a.startsWith('--'))
        .slice(0, -1),
    );
    expect(copied).toEqual(expect.arrayContaining(['package.json', 'package-lock.json']));
  });

  it('copies only files that exist and that .dockerignore sends, from stages that exist', () => {
    for (const i of instructions.filter((x) => x.op === 'COPY' || x.op === 'ADD')) {
      const words = i.args.split(/\s+/);
      const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length);
      const sources = words.filter((w) => !w.startsWith('--')).slice(0, -1);
      expect(sources.length).toBeGreaterThan(0);
      if (from) {
        expect(stages.slice(0, i.stage)).toContain(from);
        continue;
      }
      for (const src of sources) {
        expect(`${src} exists: ${existsSync(path.join(ROOT, src))}`).toBe(`${src} exists: true`);
        expect(`${src} sent: ${included(src)}`).toBe(`${src} sent: true`);
      }
    }
  });

  it('.dockerignore sends every file the apps load and keeps out local state and tests', () => {
    for (const app of Object.keys(APPS)) {
      const files = runtimeFiles(`apps/${app}/src/main.ts`);
      expect(files.size).toBeGreaterThan(20);
      const left = [...files].filter((f) => !included(f));
      expect(left).toEqual([]);
    }
    for (const f of [
      'tsconfig.json',
      'tsconfig.base.json',
      'package.json',
      'package-lock.json',
      'libs/actions/src/std/quickjs-worker.js',
    ])
      expect(`${f}: ${included(f)}`).toBe(`${f}: true`);
    for (const f of [
      'node_modules/yaml/package.json',
      'data/x',
      'tmp/x',
      '.git/HEAD',
      'tempest.log',
      'apps/volume-api-e2e/test/backups.int-spec.ts',
      'apps/volume-api/src/x.spec.ts',
      'libs/persistence/src/x.int-spec.ts',
    ])
      expect(`${f}: ${included(f)}`).toBe(`${f}: false`);
  });

  it('runs bundles with production dependencies only, from a base image given as a build argument, with a HEALTHCHECK', () => {
    const froms = instructions.filter((i) => i.op === 'FROM').map((i) => i.args.split(/\s+/)[0]);
    expect(new Set(froms)).toEqual(new Set(['${NODE_IMAGE}']));
    expect(Object.keys(args)).toContain('NODE_IMAGE');
    const runtime = instructions.filter((i) => i.stage === last);
    const copied = runtime.filter((i) => i.op === 'COPY').map((i) => i.args);
    expect(
      copied
        .filter((c) => !c.includes('--from='))
        .flatMap((c) =>
          c
            .split(/\s+/)
            .filter((w) => !w.startsWith('--'))
            .slice(0, -1),
        ),
    ).toEqual(['package.json', 'docker/entrypoint.sh', 'docker/healthcheck.js']);
    const depsStage = stages.indexOf(/--from=(\S+) \/app\/node_modules/.exec(copied.join('\n'))?.[1] ?? '');
    const depsRun = instructions.filter((i) => i.stage === depsStage && i.op === 'RUN').map((i) => i.args);
    expect(depsRun.some((r) => /npm ci\b.*--omit=dev/.test(r))).toBe(true);
    expect(copied.some((c) => /--from=build \/src\/dist\/apps \.\/dist\/apps/.test(c))).toBe(true);
    const buildStage = stages.indexOf('build');
    expect(
      instructions.some((i) => i.stage === buildStage && i.op === 'RUN' && /npm run build/.test(i.args)),
    ).toBe(true);
    const health = runtime.filter((i) => i.op === 'HEALTHCHECK');
    expect(health).toHaveLength(1);
    expect(health[0]!.args).toContain('/usr/local/bin/osc-healthcheck');
  });

  it('runs as a numeric non-root user, through the entrypoint script', () => {
    const users = instructions.filter((i) => i.op === 'USER' && i.stage === last).map((i) => i.args);
    expect(users.length).toBeGreaterThan(0);
    const user = users[users.length - 1]!.split(':')[0]!;
    expect(user).toMatch(/^\d+$/);
    expect(Number(user)).toBeGreaterThan(0);
    const entry = instructions
      .filter((i) => i.op === 'ENTRYPOINT' && i.stage === last)
      .map((i) => JSON.parse(i.args) as string[]);
    expect(entry).toHaveLength(1);
    const copy = instructions.find(
      (i) => i.op === 'COPY' && i.stage === last && i.args.split(/\s+/).at(-1) === entry[0]![0],
    );
    const script = copy!.args.split(/\s+/).filter((w) => !w.startsWith('--'))[0]!;
    expect(script).toBe('docker/entrypoint.sh');
    expect(statSync(path.join(ROOT, script)).mode & 0o111).not.toBe(0);
  });

  it('the entrypoint knows exactly the apps that have a main.ts, and starts their bundles', () => {
    const text = readFileSync(path.join(ROOT, 'docker/entrypoint.sh'), 'utf8');
    const listed = /^\s*([\w-]+(?:\s*\|\s*[\w-]+)*)\)\s*;;/m
      .exec(text)![1]!
      .split('|')
      .map((s) => s.trim());
    const withMain = readdirSync(path.join(ROOT, 'apps')).filter((a) =>
      existsSync(path.join(ROOT, 'apps', a, 'src/main.ts')),
    );
    expect(listed.sort()).toEqual(withMain.sort());
    expect(text).toMatch(/exec node --enable-source-maps "dist\/apps\/\$\{app\}\/main\.js"/);
  });

  it('the entrypoint refuses an unknown app and starts a known one (which then checks its configuration)', () => {
    const run = (argv: string[], env: Record<string, string>) =>
      spawnSync('sh', [path.join(ROOT, 'docker/entrypoint.sh'), ...argv], {
        cwd: ROOT,
        env: { PATH: process.env['PATH'] ?? '', ...env },
        encoding: 'utf8',
        timeout: 60_000,
      });
    // The entrypoint starts bundles: build the one it is asked for here when `npm run build` has not run.
    if (!existsSync(path.join(ROOT, 'dist/apps/scheduler-stats/main.js'))) {
      const built = spawnSync(
        process.execPath,
        ['-r', '@swc-node/register', 'tools/build/bundle.ts', 'scheduler-stats'],
        { cwd: ROOT, encoding: 'utf8' },
      );
      expect(built.stderr).toBe('');
    }
    const unknown = run(['nope'], {});
    expect(unknown.status).toBe(64);
    expect(unknown.stderr).toContain('workflow-api');
    const byEnv = run([], { APP: 'scheduler-stats' });
    expect(byEnv.status).toBe(2);
    expect(byEnv.stderr).toContain('scheduler-stats: invalid configuration');
    expect(byEnv.stderr).toContain('DATABASE_URL');
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------
// Kubernetes OpenAPI schemas

/** The rendered manifests (`kubectl kustomize`, offline), as a cluster would receive them. */
function kustomize(dir: string): Obj[] {
  const out = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8', timeout: 60_000 });
  if (out.error || out.status !== 0)
    throw new Error(`kubectl kustomize ${dir} failed: ${out.error?.message ?? out.stderr}`);
  return parseAllDocuments(out.stdout).map((d) => d.toJS() as Obj);
}

/** Per object, null when it is valid against its Kubernetes OpenAPI schema, else the error (validate-manifests.mjs). */
function schemaErrors(objects: Obj[]): (string | null)[] {
  const out = spawnSync(process.execPath, [path.join(__dirname, 'validate-manifests.mjs')], {
    input: JSON.stringify(objects),
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (out.status !== 0) throw new Error(`validate-manifests.mjs failed: ${out.stderr}`);
  return JSON.parse(out.stdout) as (string | null)[];
}

describe('k8s/ rendered with kubectl kustomize', () => {
  it('every object is valid against its Kubernetes OpenAPI schema', () => {
    const objects = kustomize(K8S);
    expect(objects.length).toBe(manifests.length);
    expect(schemaErrors(objects).filter((e) => e !== null)).toEqual([]);
  });

  it('the schema check rejects an invalid object', () => {
    const d = structuredClone(find('Deployment', 'workflow-engine')!.body);
    const wrongType = structuredClone(d);
    wrongType['spec']['replicas'] = 'two';
    const missing = structuredClone(d);
    delete missing['spec']['selector'];
    const [valid, badReplicas, noSelector] = schemaErrors([d, wrongType, missing]);
    expect(valid).toBeNull();
    expect(badReplicas).toMatch(/replicas/);
    expect(noSelector).toMatch(/selector/);
  });
});

describe('k8s/base: migration Job and NetworkPolicies', () => {
  it('the migration Job runs `osc-entrypoint migrate` from the image with only DATABASE_URL, which the migrate command reads', () => {
    const jobs = ofKind('Job');
    expect(jobs.map((j) => j.name)).toEqual(['osc-migrate']);
    const pod = jobs[0]!.body['spec']['template']['spec'];
    const c: Obj = pod['containers'][0];
    expect(c['args']).toEqual(['migrate']);
    expect(String(c['image']).split(':')[0]).toBe(containerOf(deployments[0]!)['image']);
    expect(['OnFailure', 'Never']).toContain(pod['restartPolicy']);
    const env = containerEnv(c);
    expect(Object.keys(env)).toEqual(['DATABASE_URL']);
    expect(loadMigrateConfig(env).DATABASE_URL).toBe(sourceData('Secret', 'osc-infra')['DATABASE_URL']);
    expect(() => loadMigrateConfig({})).toThrow(ConfigError);
    expect(pod['securityContext']['runAsNonRoot']).toBe(true);
    expect(c['securityContext']['readOnlyRootFilesystem']).toBe(true);
    const text = readFileSync(path.join(ROOT, 'docker/entrypoint.sh'), 'utf8');
    expect(text).toMatch(
      /"\$app" = migrate ]; then\n\s*exec node --enable-source-maps dist\/apps\/embedded\/main\.js migrate/,
    );
  });

  const policies = ofKind('NetworkPolicy');
  const selects = (policy: Manifest, labels: Record<string, string>): boolean => {
    const sel: Obj = policy.body['spec']['podSelector'];
    const match = Object.entries(sel['matchLabels'] ?? {}).every(([k, v]) => labels[k] === v);
    const exprs = (sel['matchExpressions'] ?? []).every((e: Obj) => {
      if (e['operator'] === 'In') return (e['values'] as string[]).includes(labels[e['key']]!);
      throw new Error(`operator ${e['operator']}: extend this test`);
    });
    return match && exprs;
  };
  const ingressPorts = (labels: Record<string, string>, fromAnywhere: boolean): number[] =>
    policies
      .filter((p) => (p.body['spec']['policyTypes'] as string[]).includes('Ingress') && selects(p, labels))
      .flatMap((p) => (p.body['spec']['ingress'] ?? []) as Obj[])
      .filter((rule) => !fromAnywhere || rule['from'] === undefined)
      .flatMap((rule) => (rule['ports'] ?? []).map((x: Obj) => x['port'] as number));

  it('ingress is denied by default to every pod, and each policy selects pods that exist', () => {
    const deny = policies.filter(
      (p) =>
        Object.keys(p.body['spec']['podSelector']).length === 0 && p.body['spec']['ingress'] === undefined,
    );
    expect(deny).toHaveLength(1);
    expect(deny[0]!.body['spec']['policyTypes']).toEqual(['Ingress']);
    const podLabels = [
      ...deployments.map((d) => d.body['spec']['template']['metadata']['labels']),
      ...ofKind('Job').map((j) => j.body['spec']['template']['metadata']['labels']),
    ];
    for (const p of policies)
      expect(`${p.name}: ${podLabels.some((l) => selects(p, l))}`).toBe(`${p.name}: true`);
  });

  it.each(Object.keys(APPS))(
    '%s: its /metrics port is open to the monitoring namespace, and an API port to everyone',
    (app) => {
      const d = find('Deployment', app)!;
      const labels = d.body['spec']['template']['metadata']['labels'];
      const port = APPS[app]!.port(containerEnv(containerOf(d)));
      expect(ingressPorts(labels, false)).toContain(port);
      if (APPS[app]!.http) expect(ingressPorts(labels, true)).toContain(port);
      else expect(ingressPorts(labels, true)).toEqual([]);
    },
  );

  it('the workers whose egress is limited are apps that need only PostgreSQL, RabbitMQ, Redis and DNS', () => {
    const egress = policies.filter((p) => (p.body['spec']['policyTypes'] as string[]).includes('Egress'));
    const limited = deployments.filter((d) =>
      egress.some((p) => selects(p, d.body['spec']['template']['metadata']['labels'])),
    );
    // The engine (std.http), the APIs (Keystone) and backup-worker (object stores) reach outside.
    expect(limited.map((d) => d.name).sort()).toEqual(['cron-scheduler', 'scheduler-stats']);
    const ports = egress.flatMap((p) =>
      (p.body['spec']['egress'] as Obj[]).flatMap((r) => r['ports'].map((x: Obj) => x['port'])),
    );
    const infra = sourceData('Secret', 'osc-infra');
    for (const url of [infra['DATABASE_URL'], infra['AMQP_URL'], infra['REDIS_URL']]) {
      const u = new URL(url!);
      const port = Number(u.port || { 'postgres:': 5432, 'amqp:': 5672, 'redis:': 6379 }[u.protocol]);
      expect(ports).toContain(port);
    }
    expect(ports).toContain(53);
  });
});

describe('k8s/overlays (dev, prod) rendered with kubectl kustomize', () => {
  const overlays = readdirSync(OVERLAYS).sort();
  const rendered = Object.fromEntries(
    overlays.map((o) => [o, asManifests(kustomize(path.join(OVERLAYS, o)))]),
  );

  it('there are a dev and a prod overlay', () => {
    expect(overlays).toEqual(['dev', 'prod']);
  });

  it.each(overlays)('%s: every object is valid against its Kubernetes OpenAPI schema', (o) => {
    const objs = rendered[o]!;
    expect(objs.length).toBeGreaterThan(20);
    expect(schemaErrors(objs.map((m) => m.body)).filter((e) => e !== null)).toEqual([]);
    const ns = objs.filter((m) => m.kind === 'Namespace').map((m) => m.name);
    expect(ns).toHaveLength(1);
    for (const m of objs.filter((x) => x.kind !== 'Namespace'))
      expect(`${m.kind}/${m.name} in ${m.namespace}`).toBe(`${m.kind}/${m.name} in ${ns[0]}`);
  });

  it.each(overlays.flatMap((o) => Object.keys(APPS).map((app) => [o, app])))(
    '%s: %s gets an environment it parses, every variable of which it reads',
    (o, app) => {
      const objs = rendered[o]!;
      const d = find('Deployment', app, objs)!;
      const env = containerEnv(containerOf(d), objs);
      expect(outcome(app, env)).toMatchObject({ ok: true });
      expect(Object.keys(env).filter((k) => !reads(app, env, k))).toEqual([]);
      const replicas = d.body['spec']['replicas'];
      const hpa = find('HorizontalPodAutoscaler', app, objs);
      if (hpa) expect(hpa.body['spec']['minReplicas']).toBe(replicas);
      const pdb = find('PodDisruptionBudget', app, objs);
      if (pdb) expect(pdb.body['spec']['minAvailable']).toBeLessThan(replicas);
    },
  );

  it('dev runs one replica of each app without Keystone; prod runs the released image with 3 API and engine pods', () => {
    const dev = rendered['dev']!;
    const prod = rendered['prod']!;
    expect(sourceData('ConfigMap', 'osc-api-auth', dev)).toEqual({ AUTH_MODE: 'noauth' });
    expect(find('Secret', 'osc-keystone', dev)).toBeUndefined();
    for (const d of dev.filter((m) => m.kind === 'Deployment')) expect(d.body['spec']['replicas']).toBe(1);
    expect(dev.filter((m) => m.kind === 'PodDisruptionBudget')).toEqual([]);
    for (const app of ['workflow-api', 'volume-api', 'workflow-engine']) {
      expect(find('Deployment', app, prod)!.body['spec']['replicas']).toBe(3);
      expect(find('HorizontalPodAutoscaler', app, prod)!.body['spec']['maxReplicas']).toBeGreaterThan(3);
    }
    const images = new Set(
      prod.flatMap((m) =>
        m.kind === 'Deployment' || m.kind === 'Job'
          ? [m.body['spec']['template']['spec']['containers'][0]['image']]
          : [],
      ),
    );
    expect([...images]).toEqual(['registry.example.com/osc:0.1.0']);
    expect(sourceData('ConfigMap', 'osc-api-auth', prod)['AUTH_MODE']).toBe('keystone');
  });
});

describe('docker/compose.yaml', () => {
  const included = dockerignore();
  const compose = parseAllDocuments(readFileSync(path.join(ROOT, 'docker/compose.yaml'), 'utf8'), {
    merge: true,
  }).map((d) => d.toJS({ maxAliasCount: -1 }) as Obj)[0]!;
  const services: Record<string, Obj> = compose['services'];
  const envOf = (s: Obj): Record<string, string> =>
    Object.fromEntries(Object.entries(s['environment'] ?? {}).map(([k, v]) => [k, String(v)]));
  const expand = (v: string) => v.replace(/\$\{(\w+):-([^}]*)\}/g, (_, _name: string, dflt: string) => dflt);

  it('runs PostgreSQL, RabbitMQ, Redis, the migrations and exactly the six apps, from the product image', () => {
    expect(Object.keys(services).sort()).toEqual(
      [...Object.keys(APPS), 'migrate', 'postgres', 'rabbitmq', 'redis'].sort(),
    );
    for (const app of [...Object.keys(APPS), 'migrate']) {
      expect(expand(services[app]!['image'])).toBe('osc:dev');
      expect(services[app]!['command']).toEqual([app]);
      expect(services[app]!['read_only']).toBe(true);
      expect(services[app]!['tmpfs']).toEqual(['/tmp']);
    }
  });

  it.each(Object.keys(APPS))(
    '%s: its environment parses with its config loaders, every variable is read, its port is published',
    (app) => {
      const s = services[app]!;
      const env = envOf(s);
      expect(outcome(app, env)).toMatchObject({ ok: true });
      expect(Object.keys(env).filter((k) => !reads(app, env, k))).toEqual([]);
      const port = APPS[app]!.port(env);
      expect((s['ports'] as string[]).map((p) => Number(expand(p).split(':').at(-1)))).toEqual([port]);
      // The infrastructure URLs name services of this file.
      for (const k of ['DATABASE_URL', 'AMQP_URL', 'REDIS_URL'])
        expect(Object.keys(services)).toContain(new URL(env[k]!).hostname);
      // Started after the migrations ran once and the broker and Redis answer.
      expect(s['depends_on']).toMatchObject({
        migrate: { condition: 'service_completed_successfully' },
        rabbitmq: { condition: 'service_healthy' },
        redis: { condition: 'service_healthy' },
      });
    },
  );

  it('migrate runs once against the same database, after PostgreSQL is healthy', () => {
    const m = services['migrate']!;
    const env = envOf(m);
    expect(Object.keys(env)).toEqual(['DATABASE_URL']);
    expect(loadMigrateConfig(env).DATABASE_URL).toBe(envOf(services['workflow-api']!)['DATABASE_URL']);
    expect(m['depends_on']).toEqual({ postgres: { condition: 'service_healthy' } });
    expect(m['restart']).toBe('on-failure');
    for (const infra of ['postgres', 'rabbitmq', 'redis'])
      expect(services[infra]!['healthcheck']['test'][0]).toBe('CMD');
  });

  it('backup-worker keeps a fixed back-end name and its directories on a named volume', () => {
    const s = services['backup-worker']!;
    const env = envOf(s);
    const [config] = backupWorker.loadConfigs(env);
    expect(env['VOLUME_BACKEND_HOST']).toBe('osc-backend-1');
    const mounts = (s['volumes'] as string[]).map((v) => v.split(':'));
    const store = config!.backup.store;
    expect(store.driver).toBe('posix');
    for (const dir of [config!.volumeBackend.directory, store.driver === 'posix' ? store.directory : '']) {
      const mount = mounts.find(([, target]) => dir === target || dir.startsWith(`${target}/`));
      expect(mount).toBeDefined();
      expect(Object.keys(compose['volumes'])).toContain(mount![0]);
    }
  });

  it('the local infrastructure image serves the commands compose.yaml gives the official images', () => {
    const entry = readFileSync(path.join(ROOT, 'docker/infra-entrypoint.sh'), 'utf8');
    for (const infra of ['postgres', 'rabbitmq', 'redis']) {
      const command: string = services[infra]!['command'][0];
      expect(entry).toMatch(new RegExp(`^\\s*(?:[\\w-]+ \\| )?${command}(?: \\| [\\w-]+)?\\)`, 'm'));
    }
    expect(included('docker/infra-entrypoint.sh')).toBe(true);
  });
});
