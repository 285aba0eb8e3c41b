import { type ReportReads, buildExecutionReport } from './execution-report';

type Row = Record<string, unknown>;

/** Answers the report's reads from in-memory rows (the SQL itself is covered by the e2e suite). */
const fakeQuery = (history: Row[], tasks: Row[] = []): ReportReads => ({
  successfulRunTimes: async () => history,
  tasksOf: async () => tasks,
  actionsOf: async () => [],
  subExecutionsOf: async () => [],
});

const running: Row = {
  id: 'ex',
  workflow_id: 'wf',
  workflow_name: 'wf',
  state: 'RUNNING',
  state_info: null,
  created_at: '2026-01-01T10:00:00Z',
  updated_at: null,
};
const NOW = new Date('2026-01-01T10:00:20Z');
const stats = { errorsOnly: false, maxDepth: -1, statisticsOnly: true };
const took = (secs: number): Row => ({
  created_at: '2026-01-01T09:00:00Z',
  updated_at: new Date(Date.UTC(2026, 0, 1, 9, 0, secs)).toISOString(),
});

describe('execution report statistics', () => {
  it('estimates the time left from earlier successful runs of the workflow', async () => {
    const r = await buildExecutionReport(fakeQuery([took(50), took(70)]), running, stats, NOW);
    expect(r).toEqual({ statistics: expect.objectContaining({ estimated_time: 40 }) });
  });

  it('answers 1 once the average is exceeded, -1 without history and 0 for a finished execution', async () => {
    expect(
      ((await buildExecutionReport(fakeQuery([took(5)]), running, stats, NOW))['statistics'] as Row)[
        'estimated_time'
      ],
    ).toBe(1);
    expect(
      ((await buildExecutionReport(fakeQuery([]), running, stats, NOW))['statistics'] as Row)[
        'estimated_time'
      ],
    ).toBe(-1);
    const done = { ...running, state: 'SUCCESS' };
    expect(
      ((await buildExecutionReport(fakeQuery([took(50)]), done, stats, NOW))['statistics'] as Row)[
        'estimated_time'
      ],
    ).toBe(0);
  });

  it('counts tasks by state; WAITING and DELAYED tasks count in no bucket', async () => {
    const tasks = ['RUNNING', 'SUCCESS', 'ERROR', 'IDLE', 'PAUSED', 'WAITING', 'DELAYED'].map((state, i) => ({
      id: `t${i}`,
      name: `t${i}`,
      type: 'ACTION',
      state,
      runtime_context: {},
    }));
    const r = await buildExecutionReport(fakeQuery([], tasks), { ...running, state: 'SUCCESS' }, stats, NOW);
    expect(r['statistics']).toEqual({
      total_tasks_count: 5,
      running_tasks_count: 1,
      success_tasks_count: 1,
      error_tasks_count: 1,
      idle_tasks_count: 1,
      paused_tasks_count: 1,
      estimated_time: 0,
    });
  });
});
