import path from 'node:path';
import { existsSync, mkdirSync } from 'node:fs';
import { type Env } from '@osc/http-common';
import { messagingMigrations, outboxEntities } from '@osc/messaging';
import { type MigrationClass, closeDataSource, combineMigrations, createDataSource } from '@osc/persistence';
import { type RunningApp, type SchemaPart, closeAll, createRuntime } from '@osc/platform';
import * as workflowApi from '@osc/workflow-api';
import * as workflowEngine from '@osc/workflow-engine';
import * as cronScheduler from '@osc/cron-scheduler';
import * as volumeApi from '@osc/volume-api';
import * as schedulerStats from '@osc/scheduler-stats';
import * as backupWorker from '@osc/backup-worker';
import { loadConfig } from './config';

/** Every schema part of every app, once each (apps of one side share parts). */
export function allSchemaParts(): SchemaPart[] {
  const byName = new Map<string, SchemaPart>();
  for (const part of [
    ...workflowApi.SCHEMA_PARTS,
    ...workflowEngine.SCHEMA_PARTS,
    ...cronScheduler.SCHEMA_PARTS,
    ...volumeApi.SCHEMA_PARTS,
    ...schedulerStats.SCHEMA_PARTS,
    ...backupWorker.SCHEMA_PARTS,
  ]) {
    byName.set(part.name, part);
  }
  return [...byName.values()];
}

export interface EmbeddedProduct {
  readonly workflowApiPort: number;
  readonly volumeApiPort: number;
  close(): Promise<void>;
}

/** The embedded PostgreSQL's folder in a DATA_DIR. */
export const embeddedDatabaseDir = (dataDir: string): string => path.join(path.resolve(dataDir), 'pg');

/** Whether DATA_DIR already holds an embedded database (PostgreSQL's PG_VERSION marks a cluster). */
export const embeddedDatabaseExists = (env: Env): boolean =>
  existsSync(path.join(embeddedDatabaseDir(loadConfig(env).dataDir), 'PG_VERSION'));

/**
 * Creates DATA_DIR's embedded database (PGlite's initdb) and applies every app's migrations, then
 * closes it. The launcher runs this in a short-lived child process on a first start: creating a
 * cluster and migrating it touch far more of PGlite's memory than running it does, and memory a
 * WebAssembly instance touched is never given back while the instance lives.
 */
export async function prepareEmbeddedDatabase(env: Env): Promise<void> {
  const dir = embeddedDatabaseDir(loadConfig(env).dataDir);
  mkdirSync(dir, { recursive: true });
  const { entities, migrations } = productSchema();
  await closeDataSource(await createDataSource({ kind: 'pglite', dataDir: dir }, entities, migrations));
}

/** Every entity and migration of the product (the outbox's and every app's), in migration order. */
export function productSchema(): { entities: never; migrations: never } {
  const parts = allSchemaParts();
  return {
    entities: [...outboxEntities, ...parts.flatMap((p) => p.entities)] as never,
    migrations: combineMigrations(
      messagingMigrations,
      ...parts.map((p) => p.migrations as readonly MigrationClass[]),
    ) as never,
  };
}

/**
 * The whole product in one process: an embedded PostgreSQL (PGlite) in DATA_DIR, in-process
 * command bus and job queue, and all six apps sharing them. Only the two APIs listen on ports.
 */
export async function startEmbedded(env: Env): Promise<EmbeddedProduct> {
  const { dataDir, maintenanceIntervalMs } = loadConfig(env);
  const wfApi = workflowApi.loadConfig(env);
  const volApi = volumeApi.loadConfig(env);
  // One process: a list started in windows overlaps nothing here, it only adds transactions (each
  // later window's item rows read, then updated), so every item starts in one decision unless
  // WORKFLOW_ENGINE_ITEMS_PER_DECISION says otherwise (docs/workflow-engine.md).
  const engine = {
    ...workflowEngine.loadConfig(env),
    ...(env['WORKFLOW_ENGINE_ITEMS_PER_DECISION'] === undefined ? { itemsPerDecision: 0 } : {}),
  };
  const cron = cronScheduler.loadConfig(env);
  const sched = schedulerStats.loadConfig(env);
  const backups = backupWorker.loadConfigs(env);

  mkdirSync(path.resolve(dataDir), { recursive: true });
  const runtime = await createRuntime(
    { mode: 'embedded', dataDir: embeddedDatabaseDir(dataDir), maintenanceIntervalMs },
    allSchemaParts(),
  );
  const apps: RunningApp[] = [];
  try {
    apps.push(await workflowEngine.startWorkflowEngine(engine, runtime, { http: false }));
    apps.push(await cronScheduler.startCronScheduler(cron, runtime, { http: false }));
    apps.push(await schedulerStats.startSchedulerStats(sched, runtime, { http: false }));
    for (const backup of backups)
      apps.push(await backupWorker.startBackupWorker(backup, runtime, { http: false }));
    const vol = await volumeApi.startVolumeApi(volApi, runtime);
    apps.push(vol);
    // The console (/console on the workflow API) reads block storage through the workflow API,
    // which reaches this process's volume API directly unless CONSOLE_VOLUME_API_URL says otherwise.
    const volHost = ['0.0.0.0', '::', ''].includes(volApi.http.host) ? '127.0.0.1' : volApi.http.host;
    const consoleVolumeApiUrl =
      wfApi.console?.volumeApiUrl ?? `http://${volHost.includes(':') ? `[${volHost}]` : volHost}:${vol.port}`;
    const wf = await workflowApi.startWorkflowApi(
      {
        ...wfApi,
        console: {
          dir: wfApi.console?.dir ?? workflowApi.DEFAULT_CONSOLE_DIR,
          volumeApiUrl: consoleVolumeApiUrl,
        },
      },
      runtime,
    );
    apps.push(wf);
    return { workflowApiPort: wf.port, volumeApiPort: vol.port, close: () => closeAll(apps, runtime) };
  } catch (err) {
    await closeAll(apps, runtime);
    throw err;
  }
}
