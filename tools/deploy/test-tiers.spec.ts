import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Test files are named by tier (issue 20, item 7): `*.spec.ts` runs without servers, `*.int-spec.ts`
 * needs PostgreSQL, RabbitMQ, Redis or an object store. A unit-named file that reaches for a server
 * fixture (the e2e harnesses' distributed mode, the test runtime, the server describe helpers, the
 * servers' URLs) is in the wrong tier.
 */
const ROOT = path.resolve(__dirname, '../..');

const SERVER_MARKERS: readonly RegExp[] = [
  /\bTEST_(POSTGRES|AMQP|REDIS)_URL\b/,
  /\bdescribeWithServers?\b/,
  /\bstartBlockStorage\b/,
  /\bcreateTestRuntime\b/,
  /\bstart(Swift|S3)\b/,
  /\btestServers\b/,
];

describe('test tiers', () => {
  it('names every test that needs a server *.int-spec.ts', () => {
    const files = execFileSync('git', ['ls-files', '*.spec.ts'], { cwd: ROOT, encoding: 'utf8' })
      .split('\n')
      .filter((f) => f && !f.endsWith('.int-spec.ts') && f !== 'tools/deploy/test-tiers.spec.ts');
    expect(files.length).toBeGreaterThan(50);
    const misnamed = files.filter((f) => {
      const text = readFileSync(path.join(ROOT, f), 'utf8');
      return SERVER_MARKERS.some((re) => re.test(text));
    });
    expect(misnamed).toEqual([]);
  });
});
