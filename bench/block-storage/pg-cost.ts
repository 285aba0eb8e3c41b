/**
 * Database side of the volumes detail page: times the old (json_agg of rows, parsed and rendered
 * in Node) and the new (JSON text rendered by PostgreSQL) list queries against an existing
 * block-storage database, sequentially, and prints the mean wall time per page of each.
 *
 *   node -r @swc-node/register bench/block-storage/pg-cost.ts postgres://postgres@127.0.0.1:5432/<db> <project> [rounds]
 */
import pg from 'pg';
import {
  negotiateMicroversion,
  parsePaging,
  SORT_ALIASES,
  VOLUME_SORT_KEYS,
  volumeDetailPlan,
  volumeDetailView,
} from '@osc/block-storage-domain';
import { VolumeRepository } from '@osc/block-storage-persistence';

async function main(): Promise<void> {
  const [url, project, roundsArg] = process.argv.slice(2);
  if (!url || !project) throw new Error('usage: pg-cost.ts <database url> <project id> [rounds]');
  const rounds = Number(roundsArg ?? '200');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const db = { query: (sql: string, params?: unknown[]) => client.query(sql, params).then((r) => r.rows) };
  const repo = new VolumeRepository();
  const mv = negotiateMicroversion({ 'openstack-api-version': 'volume 3.71' });
  const view = {
    mv,
    isAdmin: true,
    links: { baseUrl: 'http://127.0.0.1:8776', projectSegment: project, apiPrefix: 'v3' as const },
  };
  const paging = parsePaging(
    { limit: '100' },
    { maxLimit: 1000, sortKeys: VOLUME_SORT_KEYS, sortAliases: SORT_ALIASES },
  );
  const scope = { projectId: project, hideMigrationTargets: false };
  const time = async (label: string, fn: () => Promise<unknown>): Promise<void> => {
    for (let i = 0; i < 20; i++) await fn();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < rounds; i++) await fn();
    process.stdout.write(
      `${label}: ${(Number(process.hrtime.bigint() - t0) / 1e6 / rounds).toFixed(3)} ms per page\n`,
    );
  };
  await time('json_agg rows (query only)', () => repo.list(db, scope, [], paging, false));
  await time('json_agg rows + view + stringify', async () =>
    JSON.stringify({
      volumes: (await repo.list(db, scope, [], paging, false)).items.map((v) =>
        volumeDetailView(view, v, 'list'),
      ),
    }),
  );
  await time('JSON text from PostgreSQL', () =>
    repo.listDetailJson(db, scope, [], paging, false, volumeDetailPlan(view)),
  );
  await client.end();
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exit(1);
});
