import { parseTransitionTarget } from './inline-params';
import { type PublishScopes, type Transition, type TransitionClause, isEngineCommand } from './model';
import { type JsonMap, type Path, type ValidationContext, isMap, shortRepr } from './validation-context';

const W = '[\\p{L}\\p{N}_]';
/** Mistral `NEXT_TASK`: a name, `name key=value...` or `name(key=value...)`. */
const NEXT_TASK_PATTERNS = [
  /^\S+$/u,
  new RegExp(`^${W}+ ${W}+=(.*)$`, 'u'),
  new RegExp(`^${W}+\\(${W}+=(.*)\\)$`, 'u'),
];

const isNextTask = (v: unknown): v is string =>
  typeof v === 'string' && NEXT_TASK_PATTERNS.some((p) => p.test(v));

/** Where each parsed transition was written (for `Task 'x' not found.` and friends). */
export type TransitionSources = Map<Transition, Path>;

const PUBLISH_SCOPES = new Set(['branch', 'global', 'atomic']);

/** `publish: {branch|global|atomic: {...}}` of an advanced clause (Mistral `PublishSpec`). */
export const parsePublishScopes = (
  ctx: ValidationContext,
  path: Path,
  value: unknown,
): PublishScopes | undefined => {
  if (!ctx.map(path, value, true)) return undefined;
  ctx.knownKeys(path, value, PUBLISH_SCOPES);
  const scopes: { branch?: JsonMap; global?: JsonMap; atomic?: JsonMap } = {};
  for (const scope of ['branch', 'global', 'atomic'] as const) {
    if (!(scope in value)) continue;
    const v = value[scope];
    if (ctx.wordKeyedMap([...path, scope], v)) {
      ctx.expressions([...path, scope], v);
      scopes[scope] = v;
    }
  }
  if (
    !scopes.branch &&
    !scopes.global &&
    !scopes.atomic &&
    Object.keys(value).every((k) => PUBLISH_SCOPES.has(k))
  ) {
    ctx.semantic(path, "Either 'branch', 'global' or 'atomic' must be specified");
  }
  return scopes;
};

const parseItem = (
  ctx: ValidationContext,
  path: Path,
  item: unknown,
  sources: TransitionSources,
): Transition | undefined => {
  let text: string;
  let condition: string | undefined;
  if (typeof item === 'string') {
    if (!isNextTask(item)) {
      ctx.schema(
        path,
        `'${item}' is not a valid transition target (a task name, 'name key=value' or 'name(key=value)')`,
      );
      return undefined;
    }
    text = item;
  } else if (isMap(item)) {
    const keys = Object.keys(item);
    const key = keys[0];
    if (keys.length !== 1 || key === undefined) {
      ctx.schema(
        path,
        `a conditional transition must have exactly one key 'target: <expression>', got ${keys.length}`,
      );
      return undefined;
    }
    if (!isNextTask(key)) {
      ctx.schema([...path, key], `'${key}' is not a valid transition target`, 'key');
      return undefined;
    }
    if (!ctx.expression([...path, key], item[key])) return undefined;
    text = key;
    condition = item[key] as string;
  } else {
    ctx.schema(path, `transition must be a task name or a one-key map 'target: <expression>'`);
    return undefined;
  }
  const parsed = parseTransitionTarget(text);
  if (!parsed.ok) {
    ctx.schema(path, parsed.error);
    return undefined;
  }
  ctx.expressions(path, parsed.params);
  const transition: Transition = {
    target: parsed.name,
    kind: isEngineCommand(parsed.name) ? 'command' : 'task',
    ...(condition !== undefined ? { condition } : {}),
    params: parsed.params,
  };
  sources.set(transition, path);
  return transition;
};

/** `next` part: a string, a one-key condition map, or a unique non-empty list of those. */
const parseNext = (
  ctx: ValidationContext,
  path: Path,
  value: unknown,
  sources: TransitionSources,
): Transition[] => {
  if (Array.isArray(value)) {
    if (value.length === 0) {
      ctx.schema(path, '[] is too short');
      return [];
    }
    const seen = new Set<string>();
    const out: Transition[] = [];
    value.forEach((item, i) => {
      const key = JSON.stringify(item);
      if (seen.has(key)) {
        ctx.schema([...path, i], `${shortRepr(item)} is listed twice (transition lists have unique items)`);
        return;
      }
      seen.add(key);
      const t = parseItem(ctx, [...path, i], item, sources);
      if (t) out.push(t);
    });
    return out;
  }
  const t = parseItem(ctx, path, value, sources);
  return t ? [t] : [];
};

/**
 * One `on-success`/`on-error`/`on-complete`/`on-skip` clause (DSL-4.1): a target, a one-key
 * `target: <condition>` map, a list of those, or the advanced `{publish: ..., next: ...}` form.
 */
export const parseClause = (
  ctx: ValidationContext,
  path: Path,
  value: unknown,
  sources: TransitionSources,
): TransitionClause | undefined => {
  if (
    isMap(value) &&
    Object.keys(value).length > 0 &&
    Object.keys(value).every((k) => k === 'publish' || k === 'next')
  ) {
    const publish =
      'publish' in value ? parsePublishScopes(ctx, [...path, 'publish'], value.publish) : undefined;
    const next = 'next' in value ? parseNext(ctx, [...path, 'next'], value.next, sources) : [];
    return { ...(publish ? { publish } : {}), next };
  }
  if (isMap(value) && Object.keys(value).length === 0) {
    ctx.schema(path, '{} does not have enough properties');
    return undefined;
  }
  if (value === null || value === undefined) {
    ctx.schema(path, 'None is not valid under any of the given schemas');
    return undefined;
  }
  return { next: parseNext(ctx, path, value, sources) };
};
