import { parseCommand } from './inline-params';
import { type RetryPolicy, type TaskPolicies } from './model';
import { type JsonMap, type Path, type ValidationContext, isMap, shortRepr } from './validation-context';

/** DSL keys of the policies (DSL-6) and their model names. */
export const POLICY_DSL_KEYS = {
  retry: 'retry',
  'wait-before': 'waitBefore',
  'wait-after': 'waitAfter',
  timeout: 'timeout',
  'pause-before': 'pauseBefore',
  concurrency: 'concurrency',
  'fail-on': 'failOn',
} as const satisfies Record<string, keyof TaskPolicies>;

const RETRY_KEYS = new Set(['count', 'delay', 'break-on', 'continue-on']);

/**
 * `retry` (DSL-6.8): a map with required `count` and `delay` and optional `break-on`/`continue-on`, or the
 * one-line form `count=3 delay=2 break-on=<% ... %>` (parsed with the inline-parameter rules).
 */
export const parseRetry = (ctx: ValidationContext, path: Path, value: unknown): RetryPolicy | undefined => {
  let data: unknown = value;
  if (typeof value === 'string') {
    if (!ctx.nonEmptyString(path, value)) return undefined;
    const parsed = parseCommand(value);
    if (!parsed.ok) {
      ctx.schema(path, parsed.error);
      return undefined;
    }
    data = parsed.params;
  }
  if (!isMap(data)) {
    ctx.schema(path, `${shortRepr(value)} is not valid under any of the given schemas`);
    return undefined;
  }
  const before = ctx.count();
  ctx.knownKeys(path, data, RETRY_KEYS);
  const hasCount = ctx.required(path, data, 'count');
  const hasDelay = ctx.required(path, data, 'delay');
  if (hasCount) ctx.expressionOrCount([...path, 'count'], data.count);
  if (hasDelay) ctx.expressionOrCount([...path, 'delay'], data.delay);
  if ('break-on' in data) ctx.expression([...path, 'break-on'], data['break-on']);
  if ('continue-on' in data) ctx.expression([...path, 'continue-on'], data['continue-on']);
  if (ctx.count() !== before) return undefined;
  return {
    count: data.count as number | string,
    delay: data.delay as number | string,
    ...(data['break-on'] !== undefined ? { breakOn: data['break-on'] as string } : {}),
    ...(data['continue-on'] !== undefined ? { continueOn: data['continue-on'] as string } : {}),
  };
};

/** The policies written in `data` (a task or task-defaults map); keys that are absent stay absent. */
export const parsePolicies = (ctx: ValidationContext, path: Path, data: JsonMap): TaskPolicies => {
  const out: { -readonly [K in keyof TaskPolicies]: TaskPolicies[K] } = {};
  if ('retry' in data) {
    const retry = parseRetry(ctx, [...path, 'retry'], data.retry);
    if (retry) out.retry = retry;
  }
  for (const key of ['wait-before', 'wait-after', 'timeout', 'concurrency'] as const) {
    if (key in data && ctx.expressionOrCount([...path, key], data[key])) {
      out[POLICY_DSL_KEYS[key]] = data[key] as number | string;
    }
  }
  for (const key of ['pause-before', 'fail-on'] as const) {
    if (key in data && ctx.expressionOrBoolean([...path, key], data[key])) {
      out[POLICY_DSL_KEYS[key]] = data[key] as boolean | string;
    }
  }
  return out;
};

/** Per policy kind: the task's own value, else the task-defaults value (DSL-2.6). */
export const mergePolicies = (own: TaskPolicies, defaults: TaskPolicies | undefined): TaskPolicies =>
  defaults ? { ...defaults, ...own } : own;
