import { z } from 'zod';

/** Thrown when environment variables are missing or invalid; lists names, never values. */
export class ConfigError extends Error {
  constructor(
    readonly app: string,
    readonly problems: readonly string[],
  ) {
    super(`${app}: invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

export type Env = Readonly<Record<string, string | undefined>>;

/**
 * Validate `env` against `schema`, reporting every invalid variable at once. Empty strings count as
 * unset, so `FOO=` falls back to the default.
 */
export function parseConfig<S extends z.ZodTypeAny>(app: string, schema: S, env: Env): Readonly<z.infer<S>> {
  const cleaned: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && v !== '') cleaned[k] = v;
  const result = schema.safeParse(cleaned);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new ConfigError(app, problems);
  }
  return Object.freeze(result.data);
}

export const portSchema = z.coerce.number().int().min(0).max(65535);
/**
 * The modes without settings of their own. Keystone mode needs `KEYSTONE_*` settings: use
 * `authEnvSchema` / `loadAuthConfig` (auth/auth-config.ts) to accept it.
 */
export const authModeSchema = z.enum(['noauth', 'headers']).default('noauth');
export const logLevelSchema = z
  .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  .default('info');

const urlWithProtocols = (protocols: string[], what: string) =>
  z.string().refine(
    (v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    `must be a ${what} URL (${protocols.map((p) => p.replace(':', '://')).join(' or ')}...)`,
  );

export const databaseUrlSchema = urlWithProtocols(['postgres:', 'postgresql:'], 'PostgreSQL');
export const amqpUrlSchema = urlWithProtocols(['amqp:', 'amqps:'], 'RabbitMQ');
export const redisUrlSchema = urlWithProtocols(['redis:', 'rediss:'], 'Redis');

/**
 * Settings every app needs to reach its infrastructure in distributed mode. All three are
 * required there: a process must not quietly fall back to embedded storage.
 */
export const distributedInfraSchema = z.object({
  DATABASE_URL: databaseUrlSchema,
  AMQP_URL: amqpUrlSchema,
  REDIS_URL: redisUrlSchema,
  DB_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(20),
  /** Prefix of every queue name, so several installations can share one broker and Redis. */
  QUEUE_PREFIX: z
    .string()
    .regex(/^([A-Za-z0-9][A-Za-z0-9._-]{0,60})?$/, 'letters, digits, dot, underscore and dash only')
    .default(''),
});

/** Print the problem and exit: used by every main.ts so a bad setting stops the process clearly. */
export function exitOnConfigError(err: unknown): never {
  if (err instanceof ConfigError) {
    // one JSON line like every other, written synchronously before the exit
    process.stderr.write(
      `${JSON.stringify({ level: 'fatal', time: new Date().toISOString(), msg: err.message })}\n`,
    );
    process.exit(2);
  }
  throw err;
}
