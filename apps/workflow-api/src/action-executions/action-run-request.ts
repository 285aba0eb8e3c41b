import { InvalidInputError } from '@osc/errors';
import { pyRepr } from '@osc/workflow-domain';
import { ACTION_EXECUTION_FIELDS } from '../executions/run-views';

/** Attributes of Mistral's ActionExecution resource (the fields its views show): the only keys a POST body may have. */
const RESOURCE_ATTRIBUTES: ReadonlySet<string> = new Set(ACTION_EXECUTION_FIELDS);

/** A validated `POST /v2/action_executions` body. */
export interface ActionRunRequest {
  readonly name: string;
  readonly input: Record<string, unknown>;
  readonly description: string | null;
  readonly namespace: string;
  readonly saveResult: boolean;
  readonly runSync: boolean;
  /** Seconds; the executor stops the action after it. */
  readonly timeout?: number;
  /** Mistral's executor group; there is one pool of executors here, so it is recorded only. */
  readonly target?: string;
  /** `params` as given (stored with a saved execution). */
  readonly params: Record<string, unknown>;
}

/** How to run: schedule and answer RUNNING, or run and wait, keeping the execution or not. */
export type ActionRunPlan = { kind: 'schedule' } | { kind: 'wait'; save: boolean };

const isMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** Python's truthiness of a JSON value (Mistral reads `params` flags with `params.get(...)`). */
const truthy = (v: unknown): boolean =>
  !(
    v === undefined ||
    v === null ||
    v === false ||
    v === 0 ||
    v === '' ||
    (Array.isArray(v) && v.length === 0) ||
    (isMap(v) && Object.keys(v).length === 0)
  );

const pyTypeName = (v: unknown): string =>
  typeof v === 'number'
    ? Number.isInteger(v)
      ? 'int'
      : 'float'
    : typeof v === 'boolean'
      ? 'bool'
      : Array.isArray(v)
        ? 'list'
        : 'dict';

/**
 * A JSON-typed attribute (`input`, `params`): an object, or a JSON string of one (tempest and
 * python-mistralclient send strings). Messages as the reference words them.
 */
function jsonMap(field: string, value: unknown, body: Record<string, unknown>): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (isMap(value)) return value;
  const invalid = (reason: string) =>
    new InvalidInputError(`Invalid input for field/attribute action_ex. Value: '${pyRepr(body)}'. ${reason}`);
  if (typeof value !== 'string')
    throw invalid(`the JSON object must be str, bytes or bytearray, not ${pyTypeName(value)}`);
  if (value === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw invalid(`${field} is not valid JSON: ${value}`);
  }
  if (parsed === null) return {};
  if (!isMap(parsed))
    throw new InvalidInputError(`JsonType field value must be a dictionary [actual=${pyRepr(parsed)}]`);
  return parsed;
}

const optText = (field: string, value: unknown, body: Record<string, unknown>): string | undefined => {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') {
    throw new InvalidInputError(
      `Invalid input for field/attribute action_ex. Value: '${pyRepr(body)}'. ${field} must be a string`,
    );
  }
  return value;
};

/**
 * Reads a `POST /v2/action_executions` body: `name`, `input`, `params` (`save_result`, `run_sync`,
 * `timeout`, `target`; our addition: `namespace` when `workflow_namespace` is absent — the reference
 * answers 500 to it), `description`, `workflow_namespace`.
 */
export function parseActionRunRequest(body: unknown): ActionRunRequest {
  if (!isMap(body)) throw new InvalidInputError('The request body must be a JSON object.');
  const unknown = Object.keys(body).filter((k) => !RESOURCE_ATTRIBUTES.has(k));
  if (unknown.length > 0)
    throw new InvalidInputError(`Unknown attribute for argument action_ex: ${unknown.join(', ')}`);
  const name = optText('name', body['name'], body);
  const input = jsonMap('input', body['input'], body);
  const params = jsonMap('params', body['params'], body);
  const description = optText('description', body['description'], body) ?? null;
  if (!name) throw new InvalidInputError('Please provide at least action name to run action.');
  const ns = optText('workflow_namespace', body['workflow_namespace'], body);
  const paramNs = params['namespace'];
  if (paramNs !== undefined && paramNs !== null && typeof paramNs !== 'string')
    throw new InvalidInputError('The parameter namespace must be a string.');
  const timeout = params['timeout'];
  if (
    timeout !== undefined &&
    timeout !== null &&
    (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout <= 0)
  ) {
    throw new InvalidInputError(
      `The parameter timeout must be a positive number of seconds, not ${pyRepr(timeout)}.`,
    );
  }
  const target = params['target'];
  if (target !== undefined && target !== null && typeof target !== 'string')
    throw new InvalidInputError('The parameter target must be a string.');
  return {
    name,
    input,
    description,
    namespace: ns ?? (typeof paramNs === 'string' ? paramNs : ''),
    saveResult: truthy(params['save_result']),
    runSync: truthy(params['run_sync']),
    ...(typeof timeout === 'number' ? { timeout } : {}),
    ...(typeof target === 'string' ? { target } : {}),
    params,
  };
}

/**
 * Mistral's choice (engine `start_action`): `run_sync` on an asynchronous action is refused; without
 * `run_sync`, a saved run or an asynchronous action is scheduled (answer RUNNING, the executor
 * completes it later); otherwise the action runs at once and the answer carries its output, saved as
 * an execution only with `save_result`.
 */
export function planActionRun(
  req: Pick<ActionRunRequest, 'runSync' | 'saveResult'>,
  actionIsAsync: boolean,
): ActionRunPlan {
  if (req.runSync && actionIsAsync)
    throw new InvalidInputError('Action does not support synchronous execution.');
  if (!req.runSync && (req.saveResult || actionIsAsync)) return { kind: 'schedule' };
  return { kind: 'wait', save: req.saveResult };
}
