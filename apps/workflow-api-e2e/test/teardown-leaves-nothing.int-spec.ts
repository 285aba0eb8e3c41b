import { spawnSync } from 'node:child_process';
import * as amqplib from 'amqplib';
import { BUS_QUEUES, queueExists, scanKeys, testServers } from '@osc/testing';
import { postJson, startEngineStack, waitForExecution } from './support/engine-stack';

const WORKFLOW = `
version: '2.0'
teardown_probe:
  tasks:
    first:
      action: std.echo output=1
      wait-before: 1
      on-success: second
    second:
      action: std.noop
`;

/** The run's queue names as the broker lists them, or null where rabbitmqctl is not at hand. */
function brokerQueuesStartingWith(prefix: string): string[] | null {
  const r = spawnSync('rabbitmqctl', ['-t', '60', 'list_queues', '-q', '--no-table-headers', 'name'], {
    encoding: 'utf8',
    timeout: 90_000,
  });
  if (r.error || r.status !== 0) return null;
  return r.stdout.split('\n').filter((name) => name.startsWith(prefix));
}

/**
 * The engine stack on real servers (workflow-api and workflow-engine over createTestRuntime) runs an
 * execution with a timer and actions, so every queue kind of the workflow side gets used; after its
 * teardown nothing of the run remains on RabbitMQ or Redis (they piled up until RabbitMQ stalled).
 */
describe('the engine stack leaves no queues or BullMQ keys after its teardown (postgres)', () => {
  it('queues and keys exist while it runs and are gone after close', async () => {
    const { amqpUrl, redisUrl } = testServers();
    const admin = await amqplib.connect(amqpUrl);
    admin.on('error', () => undefined);
    try {
      const stack = await startEngineStack('postgres');
      const prefix = stack.testRuntime.queuePrefix!;
      try {
        expect((await stack.client.post('/v2/workflows', WORKFLOW)).status).toBe(201);
        const started = await postJson(stack.client, '/v2/executions', { workflow_name: 'teardown_probe' });
        expect(started.status).toBe(201);
        expect((await waitForExecution(stack.client, started.body.id)).state).toBe('SUCCESS');
        expect(await queueExists(admin, `${prefix}workflow.engine`)).toBe(true);
        expect((await scanKeys(redisUrl, `osc:${prefix}*`)).length).toBeGreaterThan(0);
      } finally {
        await stack.close();
      }
      for (const q of BUS_QUEUES) {
        expect(await queueExists(admin, `${prefix}${q}`)).toBe(false);
        expect(await queueExists(admin, `${prefix}${q}.dlq`)).toBe(false);
      }
      expect(await scanKeys(redisUrl, `osc:${prefix}*`)).toEqual([]);
      // Queues the purge does not know by name would show here.
      const listed = brokerQueuesStartingWith(prefix);
      if (listed !== null) expect(listed).toEqual([]);
    } finally {
      await admin.close();
    }
  }, 120_000);
});
