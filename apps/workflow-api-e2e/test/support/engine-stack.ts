import { type KeystoneSettings, type RouteInfo, listRoutes } from '@osc/http-common';
import { type RunningApp, type SchemaPart } from '@osc/platform';
import { createTestRuntime, type TestRuntime, type TestRuntimeMode } from '@osc/testing';
import * as workflowApi from '@osc/workflow-api';
import * as workflowEngine from '@osc/workflow-engine';
import { Client, type HttpResult } from './api-server';

/** workflow-api plus workflow-engine (engine and executors) on one fresh runtime. */
export interface EngineStack {
  readonly mode: TestRuntimeMode;
  readonly baseUrl: string;
  readonly client: Client;
  readonly testRuntime: TestRuntime;
  /** Every route the API registered (HEAD left out), for suites that must walk the whole surface. */
  readonly routes: readonly RouteInfo[];
  close(): Promise<void>;
}

/**
 * `notifyAmqpUrl` / `notifyExchange` configure the engines' `amqp` notification publisher;
 * `bodyLimit` is the API's (default 1 MiB), `consoleDir` where it finds the built console.
 */
export async function startEngineStack(
  mode: TestRuntimeMode,
  opts: {
    engines?: number;
    notifyAmqpUrl?: string;
    notifyExchange?: string;
    authMode?: 'noauth' | 'headers' | 'keystone';
    /** Where keystone mode validates tokens (e.g. a FakeKeystone of @osc/http-common). */
    keystone?: KeystoneSettings;
    allowActionExecutionDeletion?: boolean;
    bodyLimit?: number;
    consoleDir?: string;
    /** Policy rules over Mistral's defaults (as WORKFLOW_API_POLICY_FILE gives them). */
    policyOverrides?: Record<string, string>;
  } = {},
): Promise<EngineStack> {
  const parts = new Map<string, SchemaPart>();
  for (const p of [...workflowApi.SCHEMA_PARTS, ...workflowEngine.SCHEMA_PARTS]) parts.set(p.name, p);
  const testRuntime = await createTestRuntime(mode, [...parts.values()]);
  const apps: RunningApp[] = [];
  try {
    const api = await workflowApi.startWorkflowApi(
      {
        http: { port: 0, host: '127.0.0.1', bodyLimit: opts.bodyLimit ?? 1024 * 1024 },
        authMode: opts.authMode ?? 'noauth',
        ...(opts.keystone ? { keystone: opts.keystone } : {}),
        logLevel: process.env['LOG_LEVEL'] ?? 'silent',
        ...(opts.allowActionExecutionDeletion ? { allowActionExecutionDeletion: true } : {}),
        ...(opts.consoleDir ? { console: { dir: opts.consoleDir } } : {}),
        ...(opts.policyOverrides ? { policyOverrides: opts.policyOverrides } : {}),
      },
      testRuntime.runtime,
    );
    const baseUrl = `http://127.0.0.1:${api.port}`;
    for (let i = 0; i < (opts.engines ?? 1); i++) {
      apps.push(
        await workflowEngine.startWorkflowEngine(
          {
            health: { port: 0, host: '127.0.0.1' },
            logLevel: 'silent',
            role: 'all',
            prefetch: 32,
            executorConcurrency: 20,
            apiUrl: baseUrl,
            notifyExchange: opts.notifyExchange ?? 'mistral',
            ...(opts.notifyAmqpUrl ? { notifyAmqpUrl: opts.notifyAmqpUrl } : {}),
          },
          testRuntime.runtime,
          { http: false },
        ),
      );
    }
    apps.push(api);
    return {
      mode,
      baseUrl,
      client: new Client(baseUrl),
      testRuntime,
      routes: listRoutes(api.app),
      async close() {
        for (const a of apps.reverse()) await a.close().catch(() => undefined);
        await testRuntime.cleanup();
      },
    };
  } catch (err) {
    for (const a of apps.reverse()) await a.close().catch(() => undefined);
    await testRuntime.cleanup();
    throw err;
  }
}

export const postJson = (c: Client, path: string, body: unknown): Promise<HttpResult> =>
  c.send('POST', path, JSON.stringify(body), 'application/json');
export const putJson = (c: Client, path: string, body: unknown): Promise<HttpResult> =>
  c.send('PUT', path, JSON.stringify(body), 'application/json');

const TERMINAL = ['SUCCESS', 'ERROR', 'CANCELLED'];

/** Polls GET /v2/executions/{id} until the state is one of `states` (terminal by default). */
export async function waitForExecution(
  c: Client,
  id: string,
  states = TERMINAL,
  timeoutMs = 30_000,
): Promise<Record<string, any>> {
  const deadline = Date.now() + timeoutMs;
  let delay = 10;
  for (;;) {
    const res = await c.get(`/v2/executions/${id}`);
    if (res.status !== 200) throw new Error(`GET execution ${id}: ${res.status} ${res.text}`);
    if (states.includes(res.body.state)) return res.body;
    if (Date.now() > deadline) throw new Error(`execution ${id} stayed ${res.body.state}`);
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 100);
  }
}

/** Polls until a task of the execution named `name` is in `state`; returns it. */
export async function waitForTask(
  c: Client,
  executionId: string,
  name: string,
  state: string,
  timeoutMs = 30_000,
): Promise<Record<string, any>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await c.get(`/v2/executions/${executionId}/tasks`);
    const t = (res.body?.tasks ?? []).filter((x: any) => x.name === name).pop();
    if (t && t.state === state) return t;
    if (Date.now() > deadline) throw new Error(`task ${name} of ${executionId} stayed ${t?.state}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
