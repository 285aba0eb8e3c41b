/**
 * A cron-scheduler replica as its own process, for crash tests: DATABASE_URL, BATCH_SIZE, and with
 * HANG_BEFORE_COMMIT=1 it prints `claimed <n>` inside its first firing transaction (executions and
 * outbox rows written, not committed) and waits there to be killed.
 */
import 'reflect-metadata';
import { OutboxWriter, messagingMigrations, outboxEntities } from '@osc/messaging';
import { createDataSource } from '@osc/persistence';
import { systemClock } from '@osc/platform';
import { CronPoller } from '../src/firing/cron-poller';
import { CronTriggerFiring } from '../src/firing/cron-trigger-firing';
import { SCHEMA_PARTS } from '../src/schema';

async function main(): Promise<void> {
  const entities = [...outboxEntities, ...SCHEMA_PARTS.flatMap((p) => p.entities)];
  const migrations = [...messagingMigrations, ...SCHEMA_PARTS.flatMap((p) => p.migrations)];
  const ds = await createDataSource(
    { kind: 'postgres', url: process.env['DATABASE_URL'] ?? '', poolSize: 3 },
    entities as never,
    migrations as never,
  );
  const hang = process.env['HANG_BEFORE_COMMIT'] === '1';
  const firing = new CronTriggerFiring(ds, new OutboxWriter(), systemClock, {
    batchSize: Number(process.env['BATCH_SIZE'] ?? '20'),
    ...(hang
      ? {
          beforeCommit: async (tx: { query(sql: string): Promise<unknown> }) => {
            const rows = (await tx.query(`SELECT count(*)::int AS n FROM "workflow_executions"`)) as {
              n: number;
            }[];
            process.stdout.write(`claimed ${rows[0]?.n ?? 0}\n`);
            await new Promise(() => undefined);
          },
        }
      : {}),
  });
  new CronPoller(ds, firing, systemClock, { maxSleepMs: 200, busySleepMs: 10 }).start();
  process.stdout.write('ready\n');
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
