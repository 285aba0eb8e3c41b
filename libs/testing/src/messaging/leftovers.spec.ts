import { liveRuns, parseQueueListing, testRunOfKey, testRunOfQueue } from './leftovers';

describe('test-run leftovers: which queues and keys belong to a test or bench run', () => {
  it.each([
    ['osc_e2e_123_ab12cd34ef56.workflow.engine', { id: 'osc_e2e_123_ab12cd34ef56.', pid: 123 }],
    ['osc_e2e_123_ab12cd34ef56.workflow.engine.dlq', { id: 'osc_e2e_123_ab12cd34ef56.', pid: 123 }],
    ['osc_dist_ab12cd34ef56.block-storage.scheduler', { id: 'osc_dist_ab12cd34ef56.' }],
    ['e2e-1a2b3c4d.block-storage.scheduler.dlq', { id: 'e2e-1a2b3c4d.' }],
    ['crash1a2b3c4d.workflow.engine', { id: 'crash1a2b3c4d.' }],
    ['crashretry1a2b3c4d.workflow.engine.dlq', { id: 'crashretry1a2b3c4d.' }],
    ['expr8168a666.workflow.engine.dlq', { id: 'expr8168a666.' }],
    ['bench1795455913044.workflow.engine', { id: 'bench1795455913044.' }],
    ['oscstartup17662x1795961613140.workflow.engine', { id: 'oscstartup17662x1795961613140.', pid: 17662 }],
    [
      'osc-test-et-4242-0a1b2c3d.event-triggers.osc-test-notify-4242-0a1b2c3d',
      { id: 'osc-test-et-4242-0a1b2c3d.', pid: 4242 },
    ],
    ['osc_ks_wf_77_0a1b2c3d.workflow.engine', { id: 'osc_ks_wf_77_0a1b2c3d.', pid: 77 }],
    ['cmd-mibx1k2z-0a1b2c3d', { id: 'cmd-mibx1k2z-0a1b2c3d' }],
    ['cmd-mibx1k2z-0a1b2c3d.dlq', { id: 'cmd-mibx1k2z-0a1b2c3d' }],
  ])('queue %s belongs to a run', (name, run) => {
    expect(testRunOfQueue(name)).toEqual(run);
  });

  it.each([
    'workflow.engine',
    'workflow.engine.dlq',
    'block-storage.scheduler',
    'prod.workflow.engine',
    'event-triggers.nova',
    'osc_e2e_x.workflow.engine',
    'bench.workflow.engine',
    'oscstartup.workflow.engine',
    'expression.workflow.engine',
    'e2e-zz.workflow.engine',
    'amq.gen-JzTY20BRgKO-HjmUJj0wLg',
  ])('queue %s is nobody’s test run', (name) => {
    expect(testRunOfQueue(name)).toBeNull();
  });

  it.each([
    ['osc:osc_e2e_1_ab12cd34ef56.workflow.actions:meta', { id: 'osc_e2e_1_ab12cd34ef56.', pid: 1 }],
    ['osc:e2e-1a2b3c4d.block-storage.backend.file:wait', { id: 'e2e-1a2b3c4d.' }],
    ['crash1a2b3c4d:crash5e6f7a8b.workflow.actions:k.x', { id: 'crash5e6f7a8b.' }],
    ['expr8168a666:expr8168a666.workflow.actions:meta', { id: 'expr8168a666.' }],
    ['bench1795455913044:bench1795455913044.workflow.timers:delayed', { id: 'bench1795455913044.' }],
    [
      'osc:oscstartup17662x1795961613140.workflow.notify.3:meta',
      { id: 'oscstartup17662x1795961613140.', pid: 17662 },
    ],
    ['osc-test-mibx1k2z-0a1b2c3d:jobs-mibx1k2z-0a1b2c3d:meta', { id: 'osc-test-mibx1k2z-0a1b2c3d:' }],
  ])('key %s belongs to a run', (key, run) => {
    expect(testRunOfKey(key)).toEqual(run);
  });

  it.each([
    'osc:workflow.actions:meta',
    'osc:prod.workflow.actions:1',
    'session:abc',
    'bull:osc_e2e_1_ab12cd34ef56.q:x',
    'plain',
  ])('key %s is nobody’s test run', (key) => {
    expect(testRunOfKey(key)).toBeNull();
  });

  it('a run is under way while a queue of it has a consumer, its process lives or a BullMQ worker of it is connected', () => {
    const queues = parseQueueListing(
      [
        'crash1a2b3c4d.workflow.engine\t2',
        'crash1a2b3c4d.workflow.engine.dlq\t0',
        `osc_e2e_${process.pid}_ab12cd34ef56.workflow.engine\t0`,
        'osc_e2e_999999999_ab12cd34ef56.workflow.engine\t0',
        'e2e-1a2b3c4d.block-storage.scheduler\t0',
        'workflow.engine\t5',
        'garbage line',
      ].join('\n'),
    );
    expect(queues).toHaveLength(6);
    const worker = `bench1795455913044:${Buffer.from('bench1795455913044.workflow.actions').toString('base64')}`;
    const live = liveRuns(queues, [worker, 'some-other-client']);
    expect([...live].sort()).toEqual([
      'bench1795455913044.',
      'crash1a2b3c4d.',
      `osc_e2e_${process.pid}_ab12cd34ef56.`,
    ]);
  });
});
