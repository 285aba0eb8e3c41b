import { z } from 'zod';
import { ConfigError, distributedInfraSchema, parseConfig, portSchema } from './config';

describe('parseConfig', () => {
  it('applies defaults and coerces numbers', () => {
    const cfg = parseConfig('t', z.object({ PORT: portSchema.default(8989) }), { PORT: '' });
    expect(cfg).toEqual({ PORT: 8989 });
  });
  it('reports every invalid name, never values', () => {
    let err: unknown;
    try {
      parseConfig('workflow-engine', distributedInfraSchema, {
        DATABASE_URL: 'mysql://secret@x/db',
        REDIS_URL: 'redis://r',
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as ConfigError).message;
    expect(message).toContain('DATABASE_URL');
    expect(message).toContain('AMQP_URL');
    expect(message).not.toContain('REDIS_URL');
    expect(message).not.toContain('secret');
  });
  it('accepts a full distributed configuration', () => {
    const cfg = parseConfig('x', distributedInfraSchema, {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/db',
      AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672',
      REDIS_URL: 'redis://127.0.0.1:6379',
    });
    expect(cfg.DB_POOL_SIZE).toBe(20);
    expect(cfg.QUEUE_PREFIX).toBe('');
  });
});
