import { parseActionRunRequest, planActionRun } from './action-run-request';

describe('parseActionRunRequest', () => {
  it('reads JSON strings or objects for input and params', () => {
    expect(
      parseActionRunRequest({
        name: 'std.echo',
        input: '{"output": 1}',
        params: '{"save_result": true, "timeout": 2, "target": "t"}',
      }),
    ).toEqual({
      name: 'std.echo',
      input: { output: 1 },
      description: null,
      namespace: '',
      saveResult: true,
      runSync: false,
      timeout: 2,
      target: 't',
      params: { save_result: true, timeout: 2, target: 't' },
    });
    expect(
      parseActionRunRequest({
        name: 'a',
        input: { x: 1 },
        params: { run_sync: 1 },
        description: 'd',
        workflow_namespace: 'ns',
      }),
    ).toMatchObject({
      input: { x: 1 },
      runSync: true,
      saveResult: false,
      description: 'd',
      namespace: 'ns',
    });
  });

  it('takes params.namespace only when workflow_namespace is absent', () => {
    expect(parseActionRunRequest({ name: 'a', params: { namespace: 'p' } }).namespace).toBe('p');
    expect(
      parseActionRunRequest({ name: 'a', workflow_namespace: 'w', params: { namespace: 'p' } }).namespace,
    ).toBe('w');
  });

  it('refuses what the reference refuses', () => {
    expect(() => parseActionRunRequest({ input: {} })).toThrow(
      'Please provide at least action name to run action.',
    );
    expect(() => parseActionRunRequest({ name: '' })).toThrow(
      'Please provide at least action name to run action.',
    );
    expect(() => parseActionRunRequest({ name: 'a', x: 1, y: 2 })).toThrow(
      'Unknown attribute for argument action_ex: x, y',
    );
    expect(() => parseActionRunRequest({ name: 'a', params: '"s"' })).toThrow(
      "JsonType field value must be a dictionary [actual='s']",
    );
    expect(() => parseActionRunRequest({ name: 'a', input: 5 })).toThrow(
      'the JSON object must be str, bytes or bytearray, not int',
    );
    expect(() => parseActionRunRequest({ name: 'a', params: { timeout: 'x' } })).toThrow(
      'timeout must be a positive number',
    );
    expect(() => parseActionRunRequest('x')).toThrow('The request body must be a JSON object.');
  });
});

describe('planActionRun', () => {
  const plan = (runSync: boolean, saveResult: boolean, async: boolean) =>
    planActionRun({ runSync, saveResult }, async);

  it('follows Mistral: sync unsaved runs wait, saved or async ones are scheduled, run_sync forces the wait', () => {
    expect(plan(false, false, false)).toEqual({ kind: 'wait', save: false });
    expect(plan(false, true, false)).toEqual({ kind: 'schedule' });
    expect(plan(false, false, true)).toEqual({ kind: 'schedule' });
    expect(plan(false, true, true)).toEqual({ kind: 'schedule' });
    expect(plan(true, false, false)).toEqual({ kind: 'wait', save: false });
    expect(plan(true, true, false)).toEqual({ kind: 'wait', save: true });
    expect(() => plan(true, false, true)).toThrow('Action does not support synchronous execution.');
  });
});
