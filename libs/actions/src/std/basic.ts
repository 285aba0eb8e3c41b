import { ActionException, type ActionImplementation, failure, success } from '../action';
import { isTruthy, pyFloat, pyFormat, pyInt } from '../python-values';

const STD = 'mistral.actions.std_actions';

/** std.noop: does nothing; result null. */
export const noopAction: ActionImplementation = {
  name: 'std.noop',
  className: `${STD}.NoOpAction`,
  run: () => Promise.resolve(success(null)),
};

/** std.async_noop: completes only when a result is posted for its action execution (DSL-17.2). */
export const asyncNoopAction: ActionImplementation = {
  name: 'std.async_noop',
  className: `${STD}.AsyncNoOpAction`,
  run: () => Promise.resolve({ kind: 'async' }),
};

/**
 * std.echo(output, delay=0): `output` after `delay` seconds. Mistral: a delay that is not a number or
 * is negative counts as 0.
 */
export const echoAction: ActionImplementation = {
  name: 'std.echo',
  className: `${STD}.EchoAction`,
  run: async (input, { clock, signal }) => {
    const seconds = Math.max(0, pyFloat(input['delay']) ?? 0);
    if (seconds > 0) await clock.sleep(seconds * 1000, signal);
    return success(input['output'] ?? null);
  },
};

/**
 * std.fail(error_data=null): an error whose value is `error_data` when that is truthy (Python
 * truthiness, as the reference tests it), otherwise the exception `Fail action expected exception.`.
 */
export const failAction: ActionImplementation = {
  name: 'std.fail',
  className: `${STD}.FailAction`,
  repr: 'Fail action',
  run: (input) => {
    const data = input['error_data'];
    if (isTruthy(data)) return Promise.resolve(failure(data));
    return Promise.reject(new ActionException('Fail action expected exception.'));
  },
};

/**
 * std.sleep(seconds=1): waits, then null. Mistral: `int(seconds)`, so `1.9` sleeps 1 s and a
 * non-integer string or a negative value sleeps 0 s. Never blocks the event loop; aborts with the run.
 */
export const sleepAction: ActionImplementation = {
  name: 'std.sleep',
  className: `${STD}.SleepAction`,
  run: async (input, { clock, signal }) => {
    const seconds = Math.max(0, pyInt(input['seconds']) ?? 0);
    if (seconds > 0) await clock.sleep(seconds * 1000, signal);
    return success(null);
  },
};

/** std.test_dict(size=0, key_prefix='', val=''): `{<key_prefix><i>: val}` for i in 0..size-1. */
export const testDictAction: ActionImplementation = {
  name: 'std.test_dict',
  className: `${STD}.TestDictAction`,
  run: (input) => {
    const size = input['size'];
    if (typeof size !== 'number' || !Number.isInteger(size)) {
      return Promise.reject(
        new ActionException(
          `'${typeof size === 'string' ? 'str' : pyTypeName(size)}' object cannot be interpreted as an integer`,
        ),
      );
    }
    const prefix = pyFormat(input['key_prefix'] ?? '');
    const result: Record<string, unknown> = {};
    for (let i = 0; i < size; i++) result[`${prefix}${i}`] = input['val'] ?? null;
    return Promise.resolve(success(result));
  },
};

const pyTypeName = (value: unknown): string => {
  if (value === null || value === undefined) return 'NoneType';
  if (typeof value === 'number') return 'float';
  if (typeof value === 'boolean') return 'bool';
  if (Array.isArray(value)) return 'list';
  return 'dict';
};
