import type { Execution, ExecutionStateChange } from '../api/mistral';
import { applyStateChange } from './live-executions';

const row = (id: string, state: string, updated: string | null = '2026-11-26 10:00:00'): Execution => ({
  id,
  workflow_id: 'w',
  workflow_name: 'wf',
  description: '',
  tags: [],
  state,
  state_info: null,
  input: '{}',
  params: '{}',
  task_execution_id: null,
  root_execution_id: null,
  created_at: '2026-11-26 09:59:00',
  updated_at: updated,
});

const change = (id: string, state: string, at = '2026-11-26T10:00:05.120Z'): ExecutionStateChange => ({
  seq: 9,
  position: 42,
  project_id: 'p',
  root_execution_id: id,
  execution_id: id,
  subject: 'execution',
  task_execution_id: null,
  action_execution_id: null,
  name: 'wf',
  state,
  previous_state: 'RUNNING',
  state_info: state === 'ERROR' ? 'boom' : null,
  details: {},
  created_at: at,
});

describe('applyStateChange', () => {
  it('gives a shown execution its new state, state info and update time at once', () => {
    const { rows, reload } = applyStateChange(
      [row('a', 'RUNNING'), row('b', 'RUNNING')],
      change('b', 'ERROR'),
      {},
    );
    expect(reload).toBe(false);
    expect(rows.map((r) => [r.id, r.state, r.state_info, r.updated_at])).toEqual([
      ['a', 'RUNNING', null, '2026-11-26 10:00:00'],
      ['b', 'ERROR', 'boom', '2026-11-26 10:00:05'],
    ]);
  });

  it('asks for a reload for an execution not shown, unless the state filter rules it out', () => {
    expect(applyStateChange([row('a', 'RUNNING')], change('new', 'RUNNING'), {})).toEqual({
      rows: [row('a', 'RUNNING')],
      reload: true,
    });
    expect(applyStateChange([], change('new', 'RUNNING'), { state: 'ERROR' }).reload).toBe(false);
    expect(applyStateChange([], change('new', 'ERROR'), { state: 'ERROR' }).reload).toBe(true);
  });

  it('drops a row whose new state leaves the state filter', () => {
    expect(
      applyStateChange([row('a', 'RUNNING'), row('b', 'RUNNING')], change('a', 'SUCCESS'), {
        state: 'RUNNING',
      }).rows.map((r) => r.id),
    ).toEqual(['b']);
  });

  it('ends in the latest state when the changes received during a list read are applied to it again', () => {
    // the list was read after the first change committed; both changes came while it was read
    const changes = [
      change('a', 'PAUSED', '2026-11-26T10:00:05.000Z'),
      change('a', 'RUNNING', '2026-11-26T10:00:06.000Z'),
    ];
    let rows = [row('a', 'PAUSED')];
    for (const c of changes) rows = applyStateChange(rows, c, {}).rows;
    expect(rows.map((r) => [r.state, r.updated_at])).toEqual([['RUNNING', '2026-11-26 10:00:06']]);
  });
});
