import { publicRuntimeContext } from './runtime-view';

// The shapes the real Mistral 15 showed for a with-items task over 3 items.
describe('publicRuntimeContext', () => {
  it('shows concurrency at the top and the free slots as capacity while items run', () => {
    const stored = {
      with_items: { count: 3, concurrency: 2 },
      with_items_progress: { cursor: 2, running: 2, done: 0 },
      timer: 'x',
    };
    expect(publicRuntimeContext(stored)).toEqual({ concurrency: 2, with_items: { capacity: 0, count: 3 } });
  });

  it('gives the slots back when the items are done', () => {
    const stored = {
      with_items: { count: 3, concurrency: 2 },
      with_items_progress: { cursor: 3, running: 0, done: 3 },
    };
    expect(publicRuntimeContext(stored)).toEqual({ concurrency: 2, with_items: { capacity: 2, count: 3 } });
  });

  it('has a null capacity and no concurrency key without a concurrency', () => {
    expect(publicRuntimeContext({ with_items: { count: 3, concurrency: 0 } })).toEqual({
      with_items: { capacity: null, count: 3 },
    });
  });

  it('keeps triggered_by and retry_task_policy and hides the engine-internal keys', () => {
    const stored = {
      triggered_by: [{ task_id: 'a', event: 'on-success' }],
      retry_task_policy: { retry_no: 1 },
      with_items_timeout: 5,
      sub_executions: [],
    };
    expect(publicRuntimeContext(stored)).toEqual({
      triggered_by: [{ task_id: 'a', event: 'on-success' }],
      retry_task_policy: { retry_no: 1 },
    });
  });
});
