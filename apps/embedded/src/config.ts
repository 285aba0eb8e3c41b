import { z } from 'zod';
import { type Env, parseConfig } from '@osc/http-common';

const schema = z.object({
  /** Where the embedded database and volume/backup files live. */
  DATA_DIR: z.string().default('./data'),
});

export interface EmbeddedConfig {
  readonly dataDir: string;
}

export function loadConfig(env: Env): EmbeddedConfig {
  const c = parseConfig('embedded', schema, env);
  return Object.freeze({ dataDir: c.DATA_DIR });
}
