import { execFileSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');

/**
 * Packages an embedded process has no use for unless configured otherwise: the Redis client and
 * BullMQ (its jobs stay in-process), the OpenTelemetry SDK and OTLP exporters (no spans exported
 * without OTEL_EXPORTER_OTLP_ENDPOINT) and the AWS SDK (the posix backup store by default). They
 * are loaded on first use; loading them at start took ~0.5 s of an embedded start's CPU (issue #17).
 */
const LOADED_ON_USE = [
  /^bullmq$/,
  /^ioredis$/,
  /^@aws-sdk\//,
  /^@opentelemetry\/exporter-trace-otlp-/,
  /^@opentelemetry\/sdk-trace$/,
];

describe('embedded start-up', () => {
  it('loads neither Redis, BullMQ, the tracing SDK nor the AWS SDK with the embedded product', () => {
    // the whole module graph of the embedded launcher, from the sources, in a process of its own
    const script = `
      require(${JSON.stringify(path.join(ROOT, 'apps/embedded/src/index.ts'))});
      const packages = new Set();
      for (const file of Object.keys(require.cache)) {
        const m = file.match(/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//);
        if (m) packages.add(m[1]);
      }
      process.stdout.write(JSON.stringify([...packages]));
    `;
    const out = execFileSync(process.execPath, ['-r', '@swc-node/register', '-e', script], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: '' },
    });
    const packages = JSON.parse(out) as string[];
    // the graph was loaded (the probe sees node_modules at all)
    expect(packages).toEqual(expect.arrayContaining(['@electric-sql/pglite', 'typeorm']));
    expect(packages.filter((p) => LOADED_ON_USE.some((re) => re.test(p)))).toEqual([]);
  }, 60_000);
});
