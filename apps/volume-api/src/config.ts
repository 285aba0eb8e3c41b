import { z } from 'zod';
import type { PolicyRules } from '@osc/policy';
import {
  type AuthMode,
  type Env,
  type KeystoneSettings,
  authEnvSchema,
  distributedInfraSchema,
  loadPolicyOverrides,
  logLevelSchema,
  parseConfig,
  portSchema,
  toAuthConfig,
} from '@osc/http-common';

const schema = authEnvSchema.extend({
  VOLUME_API_PORT: portSchema.default(8776),
  VOLUME_API_HOST: z.string().default('0.0.0.0'),
  LOG_LEVEL: logLevelSchema,
  /** Cinder refuses bodies over 112 KiB with 413. */
  VOLUME_API_BODY_LIMIT: z.coerce
    .number()
    .int()
    .min(1024)
    .default(112 * 1024),
  /** Public endpoint used in links; default: from the request. */
  VOLUME_API_PUBLIC_URL: z.string().url().optional(),
  /** Serve the removed v2 API (the seeds ask for it); `false` switches it off. */
  VOLUME_API_ENABLE_V2: z.enum(['true', 'false']).default('true'),
  /** Installation default volume type name (BS-7.2.8). */
  VOLUME_DEFAULT_TYPE: z.string().min(1).max(255).default('__DEFAULT__'),
  /** Zone of volumes created without one (BS-7.7.6). */
  VOLUME_DEFAULT_AVAILABILITY_ZONE: z.string().min(1).max(255).default('nova'),
  /** Default and maximum page size (BS-5.1). */
  VOLUME_API_MAX_LIMIT: z.coerce.number().int().min(1).max(100000).default(1000),
  /** Pool stats older than this are ignored (BS-10.1). */
  VOLUME_SERVICE_DOWN_SECONDS: z.coerce.number().int().min(1).default(180),
  /** The capacity weigher's multiplier for the placements the API makes (groups, retype migrations), as scheduler-stats'. */
  SCHEDULER_CAPACITY_WEIGHT_MULTIPLIER: z.coerce.number().default(1),
  /** oslo.policy-style YAML (or JSON) file whose rules override Cinder's defaults. */
  VOLUME_API_POLICY_FILE: z.string().min(1).optional(),
});

export interface VolumeApiConfig {
  readonly http: { port: number; host: string; bodyLimit: number; publicUrl?: string };
  readonly authMode: AuthMode;
  /** Set in keystone mode (AUTH_MODE=keystone, KEYSTONE_* variables). */
  readonly keystone?: KeystoneSettings;
  readonly logLevel: string;
  readonly enableV2: boolean;
  readonly defaultVolumeType: string;
  readonly defaultAvailabilityZone: string;
  readonly maxLimit: number;
  readonly serviceDownSeconds: number;
  readonly capacityWeightMultiplier: number;
  /** The deployment's policy rules (from `VOLUME_API_POLICY_FILE`) over Cinder's defaults; none: defaults. */
  readonly policyOverrides?: PolicyRules;
}

export function loadConfig(env: Env): VolumeApiConfig {
  const c = parseConfig('volume-api', schema, env);
  const auth = toAuthConfig('volume-api', c);
  return Object.freeze({
    http: {
      port: c.VOLUME_API_PORT,
      host: c.VOLUME_API_HOST,
      bodyLimit: c.VOLUME_API_BODY_LIMIT,
      publicUrl: c.VOLUME_API_PUBLIC_URL,
    },
    authMode: auth.mode,
    keystone: auth.keystone,
    logLevel: c.LOG_LEVEL,
    enableV2: c.VOLUME_API_ENABLE_V2 === 'true',
    defaultVolumeType: c.VOLUME_DEFAULT_TYPE,
    defaultAvailabilityZone: c.VOLUME_DEFAULT_AVAILABILITY_ZONE,
    maxLimit: c.VOLUME_API_MAX_LIMIT,
    serviceDownSeconds: c.VOLUME_SERVICE_DOWN_SECONDS,
    capacityWeightMultiplier: c.SCHEDULER_CAPACITY_WEIGHT_MULTIPLIER,
    policyOverrides: loadPolicyOverrides('volume-api', 'VOLUME_API_POLICY_FILE', c.VOLUME_API_POLICY_FILE),
  });
}

export const loadInfraConfig = (env: Env) => parseConfig('volume-api', distributedInfraSchema, env);
