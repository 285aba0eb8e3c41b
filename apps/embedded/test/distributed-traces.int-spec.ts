import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DistributedStack } from './distributed-stack';
import { OtlpReceiver } from './otlp-receiver';

const TOKEN = { 'x-auth-token': 'tracer:traced-project' };

/**
 * Traces in distributed mode: the workflow API, an engine and a separate executor process export
 * spans over OTLP/HTTP (the API as JSON, the others as protobuf) to a receiver in the test, and one
 * execution, from `POST /v2/executions` to the std.http call the executor makes, is one trace
 * across the three processes, each under its own service name.
 */
describe('distributed mode: one execution is one trace across processes', () => {
  const stack = new DistributedStack();
  const receiver = new OtlpReceiver();
  const seen: (string | undefined)[] = [];
  let target: Server;
  let targetUrl = '';

  beforeAll(async () => {
    await stack.createDatabase();
    target = createServer((req, res) => {
      seen.push(req.headers['traceparent'] as string | undefined);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/hello`;
  });
  afterAll(async () => {
    await stack.stop();
    await receiver.close();
    await new Promise((resolve) => target.close(resolve));
  }, 30_000);

  it('exports the spans of API, engine and executor with one trace id', async () => {
    const endpoint = await receiver.listen();
    const otel = (protocol: string) => ({
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    });
    await stack.start([
      { name: 'workflow-api', app: 'workflow-api', portVar: 'WORKFLOW_API_PORT', env: otel('http/json') },
      {
        name: 'engine',
        app: 'workflow-engine',
        portVar: 'WORKFLOW_ENGINE_HEALTH_PORT',
        env: { ...otel('http/protobuf'), WORKFLOW_ENGINE_ROLE: 'engine' },
      },
      {
        name: 'executor',
        app: 'workflow-engine',
        portVar: 'WORKFLOW_ENGINE_HEALTH_PORT',
        env: {
          ...otel('http/protobuf'),
          WORKFLOW_ENGINE_ROLE: 'executor',
          OTEL_SERVICE_NAME: 'workflow-executor',
        },
      },
    ]);
    const api = `http://127.0.0.1:${stack.port('workflow-api')}`;
    const definition = [
      "version: '2.0'",
      'traced_wf:',
      '  tasks:',
      '    call:',
      '      action: std.http',
      '      input:',
      `        url: ${targetUrl}`,
    ].join('\n');
    const created = await fetch(`${api}/v2/workflows`, {
      method: 'POST',
      headers: { ...TOKEN, 'content-type': 'text/plain' },
      body: definition,
    });
    expect(created.status).toBe(201);
    const started = await fetch(`${api}/v2/executions`, {
      method: 'POST',
      headers: { ...TOKEN, 'content-type': 'application/json' },
      body: JSON.stringify({ workflow_name: 'traced_wf' }),
    });
    expect(started.status).toBe(201);
    const { id } = (await started.json()) as { id: string };
    const deadline = Date.now() + 60_000;
    let state = '';
    while (state !== 'SUCCESS' && Date.now() < deadline) {
      state = (
        (await (await fetch(`${api}/v2/executions/${id}`, { headers: TOKEN })).json()) as { state: string }
      ).state;
      if (state === 'ERROR') throw new Error(`execution ${id} failed`);
      if (state !== 'SUCCESS') await new Promise((r) => setTimeout(r, 200));
    }
    expect(state).toBe('SUCCESS');
    // A clean stop flushes every process's exporter.
    expect(await stack.terminate()).toEqual([0, 0, 0]);

    const root = receiver.spans.find((s) => s.name === 'POST /v2/executions');
    expect(root).toMatchObject({ service: 'workflow-api', parentSpanId: '', encoding: 'application/json' });
    const traceSpans = receiver.spans.filter((s) => s.traceId === root?.traceId);
    const services = new Set(traceSpans.map((s) => s.service));
    expect([...services].sort()).toEqual(['workflow-api', 'workflow-engine', 'workflow-executor']);
    const names = (service: string) =>
      new Set(traceSpans.filter((s) => s.service === service).map((s) => s.name));
    expect([...names('workflow-engine')]).toEqual(
      expect.arrayContaining(['process workflow.engine', 'engine transaction']),
    );
    expect([...names('workflow-executor')]).toEqual(
      expect.arrayContaining(['action std.http', 'std.http GET']),
    );
    for (const s of traceSpans.filter((x) => x.service !== 'workflow-api'))
      expect(s.encoding).toBe('application/x-protobuf');
    // Every span but the root has its parent in the same trace: no hop started a new trace.
    const ids = new Set(traceSpans.map((s) => s.spanId));
    expect(traceSpans.filter((s) => s !== root && !ids.has(s.parentSpanId))).toEqual([]);
    // std.http carried the trace on to the service it called.
    const call = traceSpans.find((s) => s.name === 'std.http GET');
    expect(seen).toContain(`00-${root?.traceId}-${call?.spanId}-01`);
  }, 180_000);
});
