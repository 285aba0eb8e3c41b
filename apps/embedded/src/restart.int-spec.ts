import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startProduct, stop } from '../test/embedded-product';

const WORKFLOW = `version: '2.0'
survivor:
  input: [who]
  tasks:
    hello:
      action: std.echo output=<% $.who %>
`;

/** Foundation acceptance: data written through the API survives a restart on the same DATA_DIR. */
describe('embedded mode restart', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'osc-restart-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('reads back after a restart a workflow written before it', async () => {
    const first = await startProduct(dataDir);
    let created: { id: string; checksum: string; created_at: string };
    try {
      const res = await fetch(`${first.base}/v2/workflows`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: WORKFLOW,
      });
      expect(res.status).toBe(201);
      created = ((await res.json()) as { workflows: (typeof created)[] }).workflows[0]!;
    } finally {
      expect(await stop(first)).toBe(0);
    }

    const second = await startProduct(dataDir);
    try {
      const res = await fetch(`${second.base}/v2/workflows/survivor`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        id: created.id,
        name: 'survivor',
        definition: WORKFLOW,
        checksum: created.checksum,
        created_at: created.created_at,
        input: 'who',
      });
    } finally {
      expect(await stop(second)).toBe(0);
    }
  }, 180_000);
});
