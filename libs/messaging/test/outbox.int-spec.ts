import 'reflect-metadata';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { outboxEntities } from '../src/outbox/outbox.entity';
import { messagingMigrations } from '../src/outbox/outbox.migration';
import { outboxContract } from './outbox.contract';
import { describeWithServer, uniqueName } from './support';

const PG_BASE = process.env['PG_ADMIN_URL'] ?? 'postgres://postgres@127.0.0.1:5432';

describeWithServer(
  'transactional outbox on PostgreSQL',
  { name: 'PostgreSQL', host: '127.0.0.1', port: 5432 },
  () => {
    jest.setTimeout(60_000);
    const dbName = uniqueName('osc_msg').replace(/-/g, '_');
    const url = `${PG_BASE}/${dbName}`;
    let ds: DataSource;

    beforeAll(async () => {
      const admin = new Client({ connectionString: `${PG_BASE}/postgres` });
      await admin.connect();
      await admin.query(`CREATE DATABASE "${dbName}"`);
      await admin.end();
      ds = new DataSource({
        type: 'postgres',
        url,
        entities: outboxEntities,
        migrations: messagingMigrations,
        poolSize: 8,
      });
      await ds.initialize();
      await ds.runMigrations();
      await ds.query(`CREATE TABLE "widget" ("id" text PRIMARY KEY, "state" text NOT NULL)`);
    });

    afterAll(async () => {
      await ds?.destroy();
      const admin = new Client({ connectionString: `${PG_BASE}/postgres` });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
      await admin.end();
    });

    outboxContract({ dataSource: () => ds, childProcessUrl: url });
  },
);
