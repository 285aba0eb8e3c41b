import 'reflect-metadata';
import { createJsonLogger, exitOnConfigError } from '@osc/http-common';
import { runProcess } from '@osc/platform';
import { spawn } from 'node:child_process';
import { setFlagsFromString } from 'node:v8';
import { embeddedDatabaseExists, prepareEmbeddedDatabase, startEmbedded } from './index';
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
} else if (process.argv[2] === 'prepare') {
  // The first start's child: create and migrate DATA_DIR's embedded database, then exit.
  prepareEmbeddedDatabase(process.env)
    .then(() => process.exit(0))
    .catch((err: unknown) => {
      createJsonLogger({ app: 'embedded', level: 'info' }).fatal({ err }, 'preparing the database failed');
      setTimeout(() => process.exit(1), 100);
    });
} else {
  /** `npm start`: the whole product in one process, no servers to install. */
  keepWasmOnBaselineCompiler();
  runProcess('embedded', async (log) => {
    if (!embeddedDatabaseExists(process.env)) {
      // First start: initdb and the migrations run in a child process, whose memory goes with it.
      log.info('creating the embedded database');
      await prepareInChild();
    }
    const product = await startEmbedded(process.env);
    log.info(
      `embedded mode ready: workflow API http://127.0.0.1:${product.workflowApiPort}/ , block storage API http://127.0.0.1:${product.volumeApiPort}/`,
    );
    return product;
  });
}

function prepareInChild(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, process.argv[1] ?? '', 'prepare'], {
      env: process.env,
      stdio: 'inherit',
    });
    child.on('error', reject);
    child.on('exit', (code, signal) =>
      code === 0
        ? resolve()
        : reject(new Error(`preparing the embedded database failed (exit ${code ?? signal})`)),
    );
  });
}

/**
 * PGlite's PostgreSQL (a 9 MB WebAssembly module) runs on V8's baseline compiler, Liftoff, only:
 * re-compiling its hot functions with the optimising compiler left ~60 MB of resident memory
 * behind in the idle process (issue #17: warm-restart idle RSS 331–386 → ~271 MB). Wasm flags are
 * read when a module is compiled, which happens after this, when the database opens.
 * EMBEDDED_WASM_TIER_UP=true keeps V8's default (optimised PostgreSQL, more memory).
 */
function keepWasmOnBaselineCompiler(): void {
  if (process.env['EMBEDDED_WASM_TIER_UP'] === 'true') return;
  setFlagsFromString('--liftoff-only');
}
