import { InvalidInputError } from '@osc/errors';
import type { RequestContext } from '@osc/http-common';
import type { WorkflowPolicy } from '../policy/workflow-policy';
import { type QueryBag, checkKnownParams, parseBool, queryValue } from './query-values';

export type Scope = 'private' | 'public';

/** Query parameters of a definition upload (POST/PUT of workflows, workbooks, actions). */
export interface UploadParams {
  readonly namespace: string;
  readonly scope: Scope;
  /** `skip_validation`: only what is needed to build the model is checked. */
  readonly validate: boolean;
}

/**
 * Reads `namespace`, `scope` and (where accepted) `skip_validation`. Mistral treats a bare
 * `skip_validation` as true; publishing (`scope=public`) needs `<collection>:publicize` (admin-only by
 * default).
 */
export function parseUploadParams(
  query: QueryBag,
  ctx: RequestContext,
  policy: WorkflowPolicy,
  opts: { policy: string; skipValidation: boolean },
): UploadParams {
  checkKnownParams(
    query,
    opts.skipValidation ? ['namespace', 'scope', 'skip_validation'] : ['namespace', 'scope'],
  );
  const scope = queryValue(query, 'scope') ?? 'private';
  if (scope !== 'private' && scope !== 'public') {
    throw new InvalidInputError(`Scope must be one of the following: private, public; actual: ${scope}`);
  }
  if (scope === 'public') policy.enforce(`${opts.policy}:publicize`, ctx);
  const skip = queryValue(query, 'skip_validation');
  const namespace = queryValue(query, 'namespace') ?? '';
  if (namespace.length > 255) throw new InvalidInputError('Namespace must be at most 255 characters.');
  return {
    namespace,
    scope,
    validate: skip === undefined ? true : !(skip.trim() === '' || parseBool('skip_validation', skip)),
  };
}

/** The YAML text of an upload; definitions come as text/plain, never as JSON. */
export function definitionText(body: unknown): string {
  if (typeof body === 'string') return body;
  if (body === undefined || body === null) return '';
  throw new InvalidInputError('The definition must be sent as YAML text (Content-Type: text/plain).');
}

/** Only `namespace` (and, for single GETs, `fields`) may follow a name in the URL. */
export function parseNamespaceParam(query: QueryBag, extra: readonly string[] = []): string {
  checkKnownParams(query, ['namespace', ...extra]);
  return queryValue(query, 'namespace') ?? '';
}
