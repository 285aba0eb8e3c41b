import { APPS, DistributedStack } from '../test/distributed-stack';

/**
 * Distributed mode as an operator runs it: every app is its own process on one PostgreSQL,
 * RabbitMQ and Redis, migrates the shared database at start (concurrently), reports ready only
 * when its dependencies answer, exposes Prometheus metrics and stops cleanly on SIGTERM. With
 * `OSC_TEST_FROM_BUNDLES=1` (CI) the processes run the bundles of `npm run build`.
 */
describe('distributed mode: the six apps as separate processes', () => {
  const stack = new DistributedStack();

  beforeAll(() => stack.createDatabase());
  afterAll(() => stack.stop(), 30_000);

  it('start together, answer /readyz and /metrics, and stop on SIGTERM', async () => {
    const started = await stack.start();
    for (const s of started) {
      const ready = await fetch(`http://127.0.0.1:${s.port}/readyz`);
      expect(await ready.json()).toMatchObject({ status: 'ok' });
      const metrics = await fetch(`http://127.0.0.1:${s.port}/metrics`);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toContain(`app="${s.app}"`);
    }
    const versions = await fetch(`http://127.0.0.1:${stack.port('workflow-api')}/`);
    expect(versions.status).toBe(200);
    expect(await stack.terminate()).toEqual(APPS.map(() => 0));
  }, 180_000);
});
