import { z } from 'zod';

/**
 * How a service reaches Keystone to validate the tokens of its callers (keystonemiddleware's
 * `[keystone_authtoken]`): its own credentials, the URI advertised in `WWW-Authenticate`, and the
 * validation cache. The password is never logged or put in error messages.
 */
export interface KeystoneSettings {
  /** Keystone base URL, e.g. `http://127.0.0.1:5000` (with or without `/v3`). */
  readonly authUrl: string;
  /** Advertised to clients in `WWW-Authenticate: Keystone uri="..."`; defaults to `authUrl`. */
  readonly wwwAuthenticateUri: string;
  readonly username: string;
  readonly password: string;
  readonly projectName: string;
  readonly userDomainName: string;
  readonly projectDomainName: string;
  /** Most token validations kept in memory. */
  readonly cacheSize: number;
  /** Longest a validation is trusted without asking Keystone again (never past the token's expiry). */
  readonly cacheTtlSeconds: number;
  /** Longest one request to Keystone may take before it counts as an outage. */
  readonly timeoutMs: number;
}

const httpUrl = z.string().refine((v) => {
  try {
    return ['http:', 'https:'].includes(new URL(v).protocol);
  } catch {
    return false;
  }
}, 'must be an http(s) URL');

/** Environment variables of keystone mode; read by every API's config through `authConfigSchema`. */
export const keystoneEnvSchema = z.object({
  KEYSTONE_AUTH_URL: httpUrl.optional(),
  KEYSTONE_WWW_AUTHENTICATE_URI: httpUrl.optional(),
  KEYSTONE_USERNAME: z.string().optional(),
  KEYSTONE_PASSWORD: z.string().optional(),
  KEYSTONE_PROJECT_NAME: z.string().default('service'),
  KEYSTONE_USER_DOMAIN_NAME: z.string().default('Default'),
  KEYSTONE_PROJECT_DOMAIN_NAME: z.string().default('Default'),
  KEYSTONE_CACHE_SIZE: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  KEYSTONE_CACHE_TTL_SECONDS: z.coerce.number().int().min(0).max(86_400).default(300),
  KEYSTONE_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(5_000),
});
