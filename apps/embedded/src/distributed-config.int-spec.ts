import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
const APPS = [
  'workflow-api',
  'workflow-engine',
  'cron-scheduler',
  'volume-api',
  'scheduler-stats',
  'backup-worker',
];

function run(
  app: string,
  env: Record<string, string | undefined>,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    let output = '';
    const clean: Record<string, string> = {};
    for (const [k, v] of Object.entries({ ...process.env, ...env })) {
      if (v !== undefined && !['DATABASE_URL', 'AMQP_URL', 'REDIS_URL'].includes(k)) clean[k] = v;
    }
    for (const k of ['DATABASE_URL', 'AMQP_URL', 'REDIS_URL']) if (env[k]) clean[k] = env[k] as string;
    const child = spawn(process.execPath, ['-r', '@swc-node/register', `apps/${app}/src/main.ts`], {
      cwd: ROOT,
      env: clean,
    });
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('exit', (code) => resolve({ code, output }));
  });
}

describe('distributed mode refuses to start without its servers', () => {
  it.each(APPS)(
    '%s exits with a message naming every missing setting',
    async (app) => {
      const { code, output } = await run(app, {});
      expect(code).toBe(2);
      expect(output).toContain('DATABASE_URL');
      expect(output).toContain('AMQP_URL');
      expect(output).toContain('REDIS_URL');
    },
    30_000,
  );

  it('names a malformed URL without echoing its value', async () => {
    const { code, output } = await run('volume-api', {
      DATABASE_URL: 'mysql://user:hunter2@db/x',
      AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672',
      REDIS_URL: 'redis://127.0.0.1:6379',
    });
    expect(code).toBe(2);
    expect(output).toContain('DATABASE_URL');
    expect(output).not.toContain('hunter2');
    expect(output).not.toContain('AMQP_URL');
  }, 30_000);
});
