import { z } from 'zod';
import { AUTH_MODES } from '../context/request-context';
import { ConfigError, type Env, parseConfig } from '../config/config';
import { type KeystoneSettings, keystoneEnvSchema } from './keystone-settings';

/** `AUTH_MODE` with every mode, plus keystone mode's `KEYSTONE_*` settings. Apps may `.merge` it. */
export const authEnvSchema = z
  .object({ AUTH_MODE: z.enum(AUTH_MODES).default('noauth') })
  .merge(keystoneEnvSchema);

/** The validated auth settings of an API: a mode, and Keystone's settings in keystone mode. */
export type AuthConfig =
  | { readonly mode: 'noauth' | 'headers'; readonly keystone?: undefined }
  | { readonly mode: 'keystone'; readonly keystone: KeystoneSettings };

/** Turn parsed `authEnvSchema` values into an `AuthConfig`; keystone mode requires URL, user and password. */
export function toAuthConfig(app: string, c: z.infer<typeof authEnvSchema>): AuthConfig {
  if (c.AUTH_MODE !== 'keystone') return Object.freeze({ mode: c.AUTH_MODE });
  const missing = (['KEYSTONE_AUTH_URL', 'KEYSTONE_USERNAME', 'KEYSTONE_PASSWORD'] as const).filter(
    (k) => !c[k],
  );
  if (missing.length > 0)
    throw new ConfigError(
      app,
      missing.map((k) => `${k}: required when AUTH_MODE is keystone`),
    );
  const authUrl = c.KEYSTONE_AUTH_URL as string;
  return Object.freeze({
    mode: 'keystone',
    keystone: Object.freeze({
      authUrl,
      wwwAuthenticateUri: c.KEYSTONE_WWW_AUTHENTICATE_URI ?? authUrl,
      username: c.KEYSTONE_USERNAME as string,
      password: c.KEYSTONE_PASSWORD as string,
      projectName: c.KEYSTONE_PROJECT_NAME,
      userDomainName: c.KEYSTONE_USER_DOMAIN_NAME,
      projectDomainName: c.KEYSTONE_PROJECT_DOMAIN_NAME,
      cacheSize: c.KEYSTONE_CACHE_SIZE,
      cacheTtlSeconds: c.KEYSTONE_CACHE_TTL_SECONDS,
      timeoutMs: c.KEYSTONE_TIMEOUT_MS,
    }),
  });
}

/** Read and validate `AUTH_MODE` and the `KEYSTONE_*` variables, reporting all problems at once. */
export function loadAuthConfig(app: string, env: Env): AuthConfig {
  return toAuthConfig(app, parseConfig(app, authEnvSchema, env));
}
