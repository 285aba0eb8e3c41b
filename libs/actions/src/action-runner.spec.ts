import { InvalidInputError, NotFoundError } from '@osc/errors';
import { STANDARD_ACTIONS } from '@osc/workflow-domain';
import { ActionAbortedError, type ActionClock, systemClock } from './action';
import { StandardActionRunner } from './action-runner';
import { ctxFor } from '../test/action-context';

/** A clock whose sleeps are recorded and resolve at once (still rejecting on abort). */
const recordingClock = (): ActionClock & { slept: number[] } => {
  const slept: number[] = [];
  return {
    slept,
    now: () => 0,
    sleep: (ms, signal) => {
      slept.push(ms);
      return signal.aborted ? Promise.reject(new Error('aborted')) : Promise.resolve();
    },
  };
};

describe('StandardActionRunner', () => {
  const runner = new StandardActionRunner();
  const ctx = ctxFor();

  it('has an implementation for every standard action of the DSL', () => {
    for (const a of STANDARD_ACTIONS) expect(runner.has(a.name)).toBe(true);
    expect(runner.has('std.nope')).toBe(false);
  });

  it('std.noop returns null and std.async_noop stays asynchronous', async () => {
    await expect(runner.run('std.noop', {}, ctx)).resolves.toEqual({ kind: 'success', result: null });
    await expect(runner.run('std.async_noop', {}, ctx)).resolves.toEqual({ kind: 'async' });
  });

  it("aborts the run's signal once the action settled, for whatever it left listening", async () => {
    const seen: AbortSignal[] = [];
    const r = new StandardActionRunner(
      {},
      {
        implementations: [
          {
            name: 'std.noop',
            className: 'mistral.actions.std_actions.NoOpAction',
            run: async (_input, { signal }) => {
              seen.push(signal);
              return { kind: 'success', result: signal.aborted };
            },
          },
        ],
      },
    );
    // not aborted while it runs, aborted after, with or without a timeout
    await expect(r.run('std.noop', {}, ctx)).resolves.toEqual({ kind: 'success', result: false });
    await expect(r.run('std.noop', {}, { ...ctx, timeoutMs: 60_000 })).resolves.toEqual({
      kind: 'success',
      result: false,
    });
    expect(seen.map((s) => [s.aborted, (s.reason as Error).message])).toEqual([
      [true, 'action finished'],
      [true, 'action finished'],
    ]);
  });

  it('std.echo returns its output after the delay (non-numbers and negatives count as 0)', async () => {
    const clock = recordingClock();
    const r = new StandardActionRunner({}, { clock });
    await expect(r.run('std.echo', { output: { a: [1, 'x'] } }, ctx)).resolves.toEqual({
      kind: 'success',
      result: { a: [1, 'x'] },
    });
    await r.run('std.echo', { output: 1, delay: '0.5' }, ctx);
    await r.run('std.echo', { output: 1, delay: 'soon' }, ctx);
    await r.run('std.echo', { output: 1, delay: -3 }, ctx);
    expect(clock.slept).toEqual([500]);
  });

  it('std.echo really waits with the system clock', async () => {
    const started = Date.now();
    await new StandardActionRunner({}, { clock: systemClock }).run(
      'std.echo',
      { output: 'x', delay: 0.2 },
      ctx,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });

  it.each([
    [{ error_data: { code: 7 } }, { code: 7 }],
    [{ error_data: 'boom' }, 'boom'],
    [{ error_data: [0] }, [0]],
  ])('std.fail %j errors with error_data as value', async (input, value) => {
    await expect(runner.run('std.fail', input, ctx)).resolves.toEqual({ kind: 'error', error: value });
  });

  it.each([[{}], [{ error_data: null }], [{ error_data: '' }], [{ error_data: 0 }], [{ error_data: {} }]])(
    'std.fail %j raises the reference exception text',
    async (input) => {
      await expect(runner.run('std.fail', input, ctx)).resolves.toEqual({
        kind: 'error',
        error:
          "The action raised an exception [action=Fail action, action_ex_id=0a1b2c3d-4e5f-6789-abcd-ef0123456789, msg='Fail action expected exception.']",
      });
    },
  );

  it('std.sleep truncates like int() and sleeps through the clock', async () => {
    const clock = recordingClock();
    const r = new StandardActionRunner({}, { clock });
    await expect(r.run('std.sleep', {}, ctx)).resolves.toEqual({ kind: 'success', result: null });
    await r.run('std.sleep', { seconds: 2.9 }, ctx);
    await r.run('std.sleep', { seconds: '3' }, ctx);
    await r.run('std.sleep', { seconds: '1.5' }, ctx);
    await r.run('std.sleep', { seconds: -1 }, ctx);
    expect(clock.slept).toEqual([1000, 2000, 3000]);
  });

  it('std.sleep does not block the event loop and stops at the task timeout', async () => {
    let ticks = 0;
    const interval = setInterval(() => ticks++, 10);
    const started = Date.now();
    const outcome = await runner.run('std.sleep', { seconds: 30 }, ctxFor({ timeoutMs: 150 }));
    clearInterval(interval);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(ticks).toBeGreaterThan(3);
    expect(outcome).toEqual({
      kind: 'error',
      error: expect.stringMatching(
        /^The action raised an exception \[action=<mistral\.actions\.std_actions\.SleepAction object at 0x[0-9a-f]+>, action_ex_id=0a1b2c3d-4e5f-6789-abcd-ef0123456789, msg='Action timed out'\]$/,
      ),
    });
  });

  it('a caller abort stops std.sleep with ActionAbortedError (no outcome)', async () => {
    const controller = new AbortController();
    const run = runner.run('std.sleep', { seconds: 30 }, ctxFor({ signal: controller.signal }));
    setTimeout(() => controller.abort(), 20);
    await expect(run).rejects.toBeInstanceOf(ActionAbortedError);
    await expect(runner.run('std.noop', {}, ctxFor({ signal: controller.signal }))).rejects.toBeInstanceOf(
      ActionAbortedError,
    );
  });

  it('std.test_dict builds size entries', async () => {
    await expect(runner.run('std.test_dict', { size: 3, key_prefix: 'k', val: 'v' }, ctx)).resolves.toEqual({
      kind: 'success',
      result: { k0: 'v', k1: 'v', k2: 'v' },
    });
    await expect(runner.run('std.test_dict', {}, ctx)).resolves.toEqual({ kind: 'success', result: {} });
    const bad = await runner.run('std.test_dict', { size: 'x' }, ctx);
    expect(bad).toEqual({
      kind: 'error',
      error: expect.stringContaining("msg=''str' object cannot be interpreted"),
    });
  });

  it('missing and unexpected parameters give the reference Invalid input text', async () => {
    await expect(runner.run('std.echo', {}, ctx)).rejects.toThrow(
      new InvalidInputError(
        "Invalid input [name=std.echo, class=mistral.actions.std_actions.EchoAction, missing=['output']]",
      ),
    );
    await expect(runner.run('std.noop', { x: 1, y: 2 }, ctx)).rejects.toThrow(
      "Invalid input [name=std.noop, class=mistral.actions.std_actions.NoOpAction, unexpected=['x', 'y']]",
    );
    await expect(runner.run('std.http', { method: 'GET', bogus: true }, ctx)).rejects.toThrow(
      "Invalid input [name=std.http, class=mistral.actions.std_actions.HTTPAction, missing=['url'], unexpected=['bogus']]",
    );
    await expect(runner.run('std.echo', {}, ctx)).rejects.toBeInstanceOf(InvalidInputError);
  });

  it('an unknown action is NotFoundError with the reference text', async () => {
    const err = await runner
      .run('std.nothing', {}, ctxFor({ workflowNamespace: 'ns1' }))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as Error).message).toBe('Failed to find action [action_name=std.nothing, namespace=ns1]');
  });

  it('actions disabled by configuration fail the action clearly', async () => {
    const r = new StandardActionRunner({ disabled: ['std.echo'] });
    const outcome = await r.run('std.echo', { output: 1 }, ctx);
    expect(outcome).toEqual({
      kind: 'error',
      error: expect.stringContaining("msg='Action std.echo is disabled by configuration.'"),
    });
    const ssh = await runner.run('std.ssh', { cmd: 'ls', host: 'h', username: 'u' }, ctx);
    expect(ssh).toEqual({ kind: 'error', error: expect.stringContaining('SSH actions are disabled') });
  });
});
