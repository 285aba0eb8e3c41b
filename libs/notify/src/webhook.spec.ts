import { type NotifyJob, type WorkflowEventPayload } from '@osc/contracts';
import { EgressPolicy } from '@osc/actions';
import { startHttpServer } from '@osc/testing';
import { NotificationDispatcher } from './notification-dispatcher';
import { PermanentDeliveryError, WebhookPublisher } from './publishers';

const event: WorkflowEventPayload = {
  id: 'e1',
  name: 'wf',
  workflow_name: 'wf',
  workflow_namespace: '',
  workflow_id: 'w1',
  state: 'RUNNING',
  state_info: null,
  project_id: 'p1',
  task_execution_id: null,
  root_execution_id: null,
  created_at: '2024-01-01 00:00:00',
  updated_at: '2024-01-01 00:00:00',
  event: 'WORKFLOW_LAUNCHED',
};

describe('webhook publisher against a local HTTP server', () => {
  let server: Awaited<ReturnType<typeof startHttpServer>>;
  const script: number[] = [];

  beforeAll(async () => {
    server = await startHttpServer((req, res) => {
      if (req.url === '/hang') return; // never answers
      const status = script.shift() ?? 200;
      res.writeHead(status, { 'Content-Type': 'text/plain' });
      res.end(status === 200 ? 'ok' : 'nope');
    });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
    script.length = 0;
  });

  it('POSTs the JSON event with the configured headers', async () => {
    const publisher = new WebhookPublisher();
    await publisher.publish(event, {
      type: 'webhook',
      url: `${server.url}/hook`,
      headers: { 'X-Token': 'abc' },
    });
    await publisher.close();
    expect(server.requests).toHaveLength(1);
    const req = server.requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/hook');
    expect(req.headers['x-token']).toBe('abc');
    expect(req.headers['content-type']).toBe('application/json');
    expect(JSON.parse(req.body)).toEqual(event);
    expect(req.body.startsWith('{"id": "e1", "name": "wf"')).toBe(true);
  });

  it('retries 5xx answers with backoff and succeeds', async () => {
    script.push(500, 503);
    const publisher = new WebhookPublisher({ backoffMs: 10 });
    await publisher.publish(event, { type: 'webhook', url: `${server.url}/hook` });
    await publisher.close();
    expect(server.requests).toHaveLength(3);
  });

  it('does not retry a 4xx answer and gives up after the attempts', async () => {
    script.push(404);
    const publisher = new WebhookPublisher({ backoffMs: 10 });
    await expect(
      publisher.publish(event, { type: 'webhook', url: `${server.url}/hook` }),
    ).rejects.toBeInstanceOf(PermanentDeliveryError);
    expect(server.requests).toHaveLength(1);
    script.push(500, 500, 500, 500);
    await expect(publisher.publish(event, { type: 'webhook', url: `${server.url}/hook` })).rejects.toThrow(
      'answered 500',
    );
    expect(server.requests).toHaveLength(4);
    await publisher.close();
  });

  it('bounds a receiver that never answers', async () => {
    const publisher = new WebhookPublisher({ attemptTimeoutMs: 100, attempts: 2, backoffMs: 10 });
    const started = Date.now();
    await expect(publisher.publish(event, { type: 'webhook', url: `${server.url}/hang` })).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(server.requests.map((r) => r.url)).toEqual(['/hang', '/hang']); // both attempts reached it, none was answered
    await publisher.close();
  });

  it('the dispatcher delivers in publisher order, logs failures and never rejects', async () => {
    script.push(400);
    const logged: string[] = [];
    const dispatcher = new NotificationDispatcher([new WebhookPublisher({ backoffMs: 10 })], {
      warn: (m) => logged.push(m),
      error: (m) => logged.push(m),
    });
    const job: NotifyJob = {
      executionId: 'e1',
      seq: 1,
      event,
      publishers: [
        { type: 'webhook', url: `${server.url}/first` },
        { type: 'noop' },
        { type: 'amqp' },
        { type: 'carrier-pigeon' as 'noop' },
        { type: 'webhook', url: `${server.url}/second` },
      ],
    };
    const report = await dispatcher.deliver(job);
    await dispatcher.close();
    expect(report.results.map((r) => [r.type, r.ok])).toEqual([
      ['webhook', false],
      ['noop', true],
      ['amqp', false],
      ['carrier-pigeon', false],
      ['webhook', true],
    ]);
    expect(server.requests.map((r) => r.url)).toEqual(['/first', '/second']);
    expect(logged).toEqual([
      'Unable to process event for publisher "webhook".',
      'notification publisher amqp is not configured',
      'Notification publisher type is not specified or unknown: "carrier-pigeon"',
    ]);
  });

  it('obeys an egress policy for literal and named hosts', async () => {
    const publisher = new WebhookPublisher({
      egress: new EgressPolicy(['127.0.0.1/32', '::1/128']),
      attempts: 1,
    });
    const port = new URL(server.url).port;
    await expect(publisher.publish(event, { type: 'webhook', url: `${server.url}/hook` })).rejects.toThrow(
      'webhook host 127.0.0.1 is in a denied network',
    );
    await expect(
      publisher.publish(event, { type: 'webhook', url: `http://localhost:${port}/hook` }),
    ).rejects.toThrow(/denied network/);
    expect(server.requests).toHaveLength(0);
    await publisher.close();
  });
});
