import { ForbiddenError, TransientError } from '@osc/errors';
import type { RequestContext } from '../context/request-context';
import { type FetchLike, identityV3Root } from './keystone-client';
import type { KeystoneSettings } from './keystone-settings';

/**
 * Cinder asks Keystone whether a project exists before acting on another project's settings
 * (default volume types: `validate_project_and_authorize`): `GET /v3/projects/{id}` with the
 * caller's own token. Unknown → false (the API answers 404 `Project with id <id> not found.`);
 * Keystone refusing the caller → 403; Keystone unreachable → 503.
 */
export class KeystoneProjects {
  private readonly root: string;

  constructor(
    private readonly settings: KeystoneSettings,
    private readonly fetchFn: FetchLike = fetch as unknown as FetchLike,
  ) {
    this.root = identityV3Root(settings.authUrl);
  }

  async exists(ctx: RequestContext, projectId: string): Promise<boolean> {
    if (!ctx.authToken) throw new ForbiddenError('You are not authorized to perform this operation.');
    let status: number;
    try {
      const res = await this.fetchFn(`${this.root}/projects/${encodeURIComponent(projectId)}`, {
        method: 'GET',
        headers: { accept: 'application/json', 'x-auth-token': ctx.authToken },
        signal: AbortSignal.timeout(this.settings.timeoutMs),
      });
      status = res.status;
      await res.text().catch(() => '');
    } catch (err) {
      throw new TransientError('The identity service is unavailable.', { cause: err });
    }
    if (status === 200) return true;
    if (status === 404) return false;
    if (status === 401 || status === 403)
      throw new ForbiddenError('You are not authorized to perform this operation.');
    throw new TransientError(`The identity service answered HTTP ${status}.`);
  }
}
