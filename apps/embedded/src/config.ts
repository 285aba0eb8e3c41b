import { z } from 'zod';
import { type Env, parseConfig } from '@osc/http-common';

const schema = z.object({
  /** Where the embedded database and volume/backup files live. */
  DATA_DIR: z.string().default('./data'),
  /**
   * Seconds between passes of the embedded database's vacuum and analyze (PGlite runs no autovacuum:
   * docs/runtime.md, "Embedded maintenance"); 0 turns them off.
   */
  EMBEDDED_MAINTENANCE_INTERVAL_SECONDS: z.coerce.number().min(0).default(60),
});

export interface EmbeddedConfig {
  readonly dataDir: string;
  readonly maintenanceIntervalMs: number;
}

export function loadConfig(env: Env): EmbeddedConfig {
  const c = parseConfig('embedded', schema, env);
  return Object.freeze({
    dataDir: c.DATA_DIR,
    maintenanceIntervalMs: Math.round(c.EMBEDDED_MAINTENANCE_INTERVAL_SECONDS * 1000),
  });
}
