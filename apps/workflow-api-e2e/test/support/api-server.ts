import { type RunningApp } from '@osc/platform';
import { createTestRuntime, type TestRuntime, type TestRuntimeMode } from '@osc/testing';
import { SCHEMA_PARTS, type WorkflowApiConfig, startWorkflowApi } from '@osc/workflow-api';

export interface ApiServer {
  readonly mode: TestRuntimeMode;
  readonly baseUrl: string;
  readonly port: number;
  readonly testRuntime: TestRuntime;
  close(): Promise<void>;
}

/** workflow-api on an ephemeral port over a fresh runtime (its own empty database). */
export async function startApiServer(
  mode: TestRuntimeMode,
  opts: {
    authMode?: 'noauth' | 'headers';
    bodyLimit?: number;
    policyOverrides?: WorkflowApiConfig['policyOverrides'];
  } = {},
): Promise<ApiServer> {
  const testRuntime = await createTestRuntime(mode, SCHEMA_PARTS);
  let app: (RunningApp & { port: number }) | undefined;
  try {
    app = await startWorkflowApi(
      {
        http: { port: 0, host: '127.0.0.1', bodyLimit: opts.bodyLimit ?? 256 * 1024 },
        authMode: opts.authMode ?? 'noauth',
        logLevel: process.env['LOG_LEVEL'] ?? 'silent',
        ...(opts.policyOverrides ? { policyOverrides: opts.policyOverrides } : {}),
      },
      testRuntime.runtime,
    );
  } catch (err) {
    await testRuntime.cleanup();
    throw err;
  }
  const running = app;
  return {
    mode,
    port: running.port,
    baseUrl: `http://127.0.0.1:${running.port}`,
    testRuntime,
    async close() {
      try {
        await running.close();
      } finally {
        await testRuntime.cleanup();
      }
    },
  };
}

export interface HttpResult {
  readonly status: number;
  readonly body: any;
  readonly text: string;
  readonly headers: Headers;
}

/** A small client speaking to the API like python-mistralclient does (text/plain uploads). */
export class Client {
  constructor(
    readonly baseUrl: string,
    private readonly headers: Record<string, string> = {},
  ) {}

  as(headers: Record<string, string>): Client {
    return new Client(this.baseUrl, headers);
  }

  async send(method: string, path: string, body?: string, contentType = 'text/plain'): Promise<HttpResult> {
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: { ...this.headers, ...(body !== undefined ? { 'content-type': contentType } : {}) },
      ...(body !== undefined ? { body } : {}),
      redirect: 'manual',
    });
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, body: parsed, text, headers: res.headers };
  }

  get = (path: string) => this.send('GET', path);
  post = (path: string, yaml: string) => this.send('POST', path, yaml);
  put = (path: string, yaml: string) => this.send('PUT', path, yaml);
  delete = (path: string) => this.send('DELETE', path);
}

/** Test modes: both by default; E2E_MODES=embedded (or postgres) narrows it for a quick local run. */
export const e2eModes = (): TestRuntimeMode[] => {
  const only = process.env['E2E_MODES'];
  return only ? (only.split(',') as TestRuntimeMode[]) : ['embedded', 'postgres'];
};
