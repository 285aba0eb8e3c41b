import 'reflect-metadata';
import { createJsonLogger, exitOnConfigError } from '@osc/http-common';
import { runProcess } from '@osc/platform';
import { startEmbedded } from './index';
import { migrateDatabase } from './migrate';

if (process.argv[2] === 'migrate') {
  // `osc-entrypoint migrate`: apply every app's migrations to DATABASE_URL once, then exit (the
  // Kubernetes migration Job and the compose stack's `migrate` service).
  const log = createJsonLogger({ app: 'migrate', level: 'info' });
  migrateDatabase(process.env)
    .then(({ migrations }) => {
      log.info({ migrations: migrations.length, last: migrations.at(-1) }, 'database migrated');
      setTimeout(() => process.exit(0), 100);
    })
    .catch((err: unknown) => {
      try {
        exitOnConfigError(err);
      } catch (e) {
        log.fatal({ err: e }, 'migration failed');
        setTimeout(() => process.exit(1), 100);
      }
    });
} else {
  /** `npm start`: the whole product in one process, no servers to install. */
  runProcess('embedded', async (log) => {
    const product = await startEmbedded(process.env);
    log.info(
      `embedded mode ready: workflow API http://127.0.0.1:${product.workflowApiPort}/ , block storage API http://127.0.0.1:${product.volumeApiPort}/`,
    );
    return product;
  });
}
