import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { type RouteInfo, listRoutes } from '@osc/http-common';
import { createRuntime, type RunningApp, type Runtime, type SchemaPart } from '@osc/platform';
import { TEST_QUEUE_EXPIRES_MS, purgeTestPrefix } from '@osc/testing';
import * as backupWorker from '@osc/backup-worker';
import * as schedulerStats from '@osc/scheduler-stats';
import * as volumeApi from '@osc/volume-api';

export type Mode = 'embedded' | 'distributed';

/** Modes the e2e suites run in: both by default, one with `E2E_MODES=embedded`. */
export const MODES: Mode[] = (process.env['E2E_MODES'] ?? 'embedded,distributed')
  .split(',')
  .map((m) => m.trim()) as Mode[];

const POSTGRES_URL = process.env['TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const AMQP_URL = process.env['TEST_AMQP_URL'] ?? 'amqp://guest:guest@127.0.0.1:5672';
const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

export interface BlockStorage {
  readonly base: string;
  readonly volumeDir: string;
  readonly mode: Mode;
  /** Every route volume-api registered (HEAD left out), for suites that walk the whole surface. */
  readonly routes: readonly RouteInfo[];
  /** Distributed mode: the run's database, and the queue prefix its apps share (for more replicas). */
  readonly distributed: { readonly databaseUrl: string; readonly queuePrefix: string } | null;
  close(): Promise<void>;
}

async function withAdmin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: POSTGRES_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/**
 * Starts volume-api, scheduler-stats and the volume back end on one runtime: embedded (PGlite in
 * memory, in-process bus and queue) or distributed (a throw-away PostgreSQL database, RabbitMQ and
 * Redis). A missing server makes this reject: the suite fails, it never skips.
 */
export async function startBlockStorage(
  mode: Mode,
  env: Record<string, string> = {},
  extra: {
    /** More apps on the same runtime (started before volume-api, closed with the others). */
    readonly more?: (runtime: Runtime, env: Record<string, string>) => Promise<RunningApp[]>;
    /** Schema parts besides volume-api's (the tables of those apps). */
    readonly schemaParts?: readonly SchemaPart[];
  } = {},
): Promise<BlockStorage> {
  const parts = [
    ...volumeApi.SCHEMA_PARTS,
    ...(extra.schemaParts ?? []).filter((p) => !volumeApi.SCHEMA_PARTS.some((q) => q.name === p.name)),
  ];
  const volumeDir = mkdtempSync(path.join(os.tmpdir(), 'osc-volumes-'));
  const host = `e2e-${randomBytes(4).toString('hex')}`;
  let database: string | null = null;
  let databaseUrl: string | null = null;
  let runtime: Runtime;
  if (mode === 'embedded') {
    runtime = await createRuntime({ mode: 'embedded', dataDir: 'memory://' }, parts);
  } else {
    database = `osc_bs_e2e_${process.pid}_${randomBytes(4).toString('hex')}`;
    await withAdmin((c) => c.query(`CREATE DATABASE "${database}"`));
    const url = new URL(POSTGRES_URL);
    url.pathname = `/${database}`;
    databaseUrl = url.toString();
    runtime = await createRuntime(
      {
        mode: 'distributed',
        databaseUrl: url.toString(),
        amqpUrl: AMQP_URL,
        redisUrl: REDIS_URL,
        poolSize: 8,
        queuePrefix: `${host}.`,
        queueExpiresMs: TEST_QUEUE_EXPIRES_MS,
      },
      parts,
    );
  }
  /** After the runtime is closed: the run's queues and BullMQ keys, then its database. */
  const dropServerState = async (): Promise<void> => {
    if (!database) return;
    try {
      await purgeTestPrefix({ queuePrefix: `${host}.`, amqpUrl: AMQP_URL, redisUrl: REDIS_URL });
    } finally {
      await withAdmin((c) => c.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`));
    }
  };
  const fullEnv = {
    VOLUME_API_PORT: '0',
    VOLUME_API_HOST: '127.0.0.1',
    AUTH_MODE: 'headers',
    LOG_LEVEL: 'error',
    VOLUME_BACKEND_DIR: volumeDir,
    VOLUME_BACKEND_HOST: host,
    ...env,
  };
  const apps: RunningApp[] = [];
  try {
    apps.push(
      await schedulerStats.startSchedulerStats(schedulerStats.loadConfig(fullEnv), runtime, { http: false }),
    );
    for (const config of backupWorker.loadConfigs(fullEnv))
      apps.push(await backupWorker.startBackupWorker(config, runtime, { http: false }));
    if (extra.more) apps.push(...(await extra.more(runtime, fullEnv)));
    const api = await volumeApi.startVolumeApi(volumeApi.loadConfig(fullEnv), runtime);
    apps.push(api);
    return {
      base: `http://127.0.0.1:${api.port}`,
      volumeDir,
      mode,
      routes: listRoutes(api.app),
      distributed: databaseUrl === null ? null : { databaseUrl, queuePrefix: `${host}.` },
      close: async () => {
        for (const a of apps.reverse()) await a.close().catch(() => undefined);
        await runtime.close();
        await dropServerState();
        rmSync(volumeDir, { recursive: true, force: true });
        // Other back ends of VOLUME_BACKENDS live in sibling directories `<volumeDir>-<name>`.
        for (const name of (fullEnv as Record<string, string>)['VOLUME_BACKENDS']?.split(',') ?? [])
          rmSync(`${volumeDir}-${name.trim()}`, { recursive: true, force: true });
      },
    };
  } catch (err) {
    for (const a of apps.reverse()) await a.close().catch(() => undefined);
    await runtime.close();
    await dropServerState();
    throw err;
  }
}

export interface Caller {
  readonly project: string;
  readonly user: string;
  readonly roles: string;
}

export const ADMIN_PROJECT = 'a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0';
export const admin: Caller = { project: ADMIN_PROJECT, user: 'admin-user', roles: 'admin,member,reader' };
export const memberOf = (project: string): Caller => ({
  project,
  user: `user-${project.slice(0, 6)}`,
  roles: 'member,reader',
});
export const newProject = (): string => randomBytes(16).toString('hex');

export interface Reply {
  readonly status: number;
  readonly headers: Headers;
  readonly body: any;
  readonly text: string;
}

/** A small HTTP client speaking like python-cinderclient (JSON, identity headers, microversion). */
export class Client {
  constructor(
    readonly base: string,
    readonly caller: Caller = admin,
    readonly mv: string | null = '3.71',
  ) {}

  as(caller: Caller): Client {
    return new Client(this.base, caller, this.mv);
  }

  at(mv: string | null): Client {
    return new Client(this.base, this.caller, mv);
  }

  /** `path` without leading `/v3`: `/types` → `/v3/<project>/types`. */
  url(path: string, withProject = true): string {
    return `${this.base}/v3${withProject ? `/${this.caller.project}` : ''}${path}`;
  }

  async raw(
    method: string,
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Reply> {
    const h: Record<string, string> = {
      'x-project-id': this.caller.project,
      'x-user-id': this.caller.user,
      'x-roles': this.caller.roles,
      accept: 'application/json',
      ...headers,
    };
    if (this.mv !== null && !('openstack-api-version' in h)) h['openstack-api-version'] = `volume ${this.mv}`;
    let payload: string | undefined;
    if (body !== undefined) {
      payload = typeof body === 'string' ? body : JSON.stringify(body);
      h['content-type'] ??= 'application/json';
    }
    const r = await fetch(url, { method, headers: h, body: payload });
    const text = await r.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    return { status: r.status, headers: r.headers, body: parsed, text };
  }

  get = (path: string, headers?: Record<string, string>) =>
    this.raw('GET', this.url(path), undefined, headers);
  post = (path: string, body?: unknown, headers?: Record<string, string>) =>
    this.raw('POST', this.url(path), body, headers);
  put = (path: string, body?: unknown, headers?: Record<string, string>) =>
    this.raw('PUT', this.url(path), body, headers);
  delete = (path: string, headers?: Record<string, string>) =>
    this.raw('DELETE', this.url(path), undefined, headers);

  /** Polls a volume (or snapshot) until its status is one of `statuses` (or it is gone: `deleted`). */
  async waitFor(
    kind: 'volumes' | 'snapshots',
    id: string,
    statuses: string[],
    timeoutMs = 60000,
  ): Promise<any> {
    const until = Date.now() + timeoutMs;
    let last: Reply | null = null;
    while (Date.now() < until) {
      last = await this.get(`/${kind}/${id}`);
      if (last.status === 404 && statuses.includes('deleted')) return null;
      const status = last.body?.[kind === 'volumes' ? 'volume' : 'snapshot']?.status;
      if (statuses.includes(status)) return last.body[kind === 'volumes' ? 'volume' : 'snapshot'];
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(
      `${kind} ${id} did not reach ${statuses.join('|')}: last ${last?.status} ${last?.text.slice(0, 300)}`,
    );
  }
}
