import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * Real object-storage servers for the backup drivers' tests and benchmark, started on loopback in
 * a fresh directory and stopped afterwards: OpenStack Swift from Debian's packages (proxy with
 * TempAuth, account, container and object servers on a one-node ring, memcached for the tokens)
 * and an S3-protocol server from npm (@20minutes/s3rver). A missing program throws with what to
 * install; it never turns into a skipped test.
 */
export interface RunningObjectStore {
  /** Environment for the backup worker (BACKUP_DRIVER and the driver's settings). */
  readonly env: Record<string, string>;
  /** Where the server keeps its data (for benchmarks measuring what was stored). */
  readonly dataDir: string;
  stop(): Promise<void>;
}

/** A TCP port nothing listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function waitHttp(
  url: string,
  ms: number,
  ok: (status: number) => boolean,
  child: ChildProcess[],
): Promise<void> {
  const until = Date.now() + ms;
  let last = '';
  while (Date.now() < until) {
    const dead = child.find((c) => c.exitCode !== null);
    if (dead)
      throw new Error(
        `${String(dead.spawnargs.slice(0, 2).join(' '))} exited with ${dead.exitCode}: ${last}`,
      );
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await r.arrayBuffer();
      if (ok(r.status)) return;
      last = `HTTP ${r.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not answer within ${ms} ms (${last})`);
}

function stopAll(children: ChildProcess[]): Promise<void> {
  return Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null || c.signalCode !== null) return resolve();
          const t = setTimeout(() => c.kill('SIGKILL'), 5000);
          c.once('exit', () => {
            clearTimeout(t);
            resolve();
          });
          c.kill('SIGTERM');
        }),
    ),
  ).then(() => undefined);
}

function spawnLogged(cmd: string, args: string[], log: string): ChildProcess {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  const keep = (b: Buffer) => {
    out.push(b);
    if (out.length > 200) out.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.once('exit', () => writeFileSync(log, Buffer.concat(out)));
  return child;
}

const SWIFT_PROGRAMS = [
  'swift-proxy-server',
  'swift-account-server',
  'swift-container-server',
  'swift-object-server',
  'swift-ring-builder',
  'memcached',
];

/** Whether Swift's Debian packages (and memcached) are installed. */
export const swiftInstalled = (): boolean =>
  SWIFT_PROGRAMS.every((p) => spawnSync('sh', ['-c', `command -v ${p}`]).status === 0) &&
  existsSync('/etc/swift/swift.conf');

/**
 * OpenStack Swift on loopback: a one-node ring (one device, one replica) built with
 * swift-ring-builder, the four servers in the foreground, TempAuth user `test:tester` / `testing`.
 * Large objects (SLO) and bulk delete are in the proxy pipeline.
 */
export async function startSwift(opts: { segmentSize?: number } = {}): Promise<RunningObjectStore> {
  const missing = SWIFT_PROGRAMS.filter((p) => spawnSync('sh', ['-c', `command -v ${p}`]).status !== 0);
  if (missing.length > 0 || !existsSync('/etc/swift/swift.conf'))
    throw new Error(
      `OpenStack Swift is not installed (missing ${missing.join(', ') || '/etc/swift/swift.conf'}): apt-get install swift swift-proxy swift-account swift-container swift-object memcached`,
    );
  const dir = mkdtempSync(path.join(os.tmpdir(), 'osc-swift-'));
  const devices = path.join(dir, 'node');
  mkdirSync(path.join(devices, 'd1'), { recursive: true });
  const [proxy, account, container, object, memcache] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ] as [number, number, number, number, number];
  const rings = { account, container, object };
  await Promise.all(
    Object.entries(rings).map(async ([kind, port]) => {
      const builder = path.join(dir, `${kind}.builder`);
      for (const args of [
        [builder, 'create', '4', '1', '1'],
        [builder, 'add', `r1z1-127.0.0.1:${port}/d1`, '1'],
        [builder, 'rebalance'],
      ]) {
        const r = await new Promise<{ code: number | null; out: string }>((resolve) => {
          const c = spawn('swift-ring-builder', args, { stdio: ['ignore', 'pipe', 'pipe'] });
          let out = '';
          c.stdout.on('data', (b: Buffer) => (out += b.toString()));
          c.stderr.on('data', (b: Buffer) => (out += b.toString()));
          c.on('exit', (code) => resolve({ code, out }));
        });
        // rebalance answers 1 for warnings (one device only); 2 is an error.
        if (r.code !== 0 && !(args[1] === 'rebalance' && r.code === 1))
          throw new Error(`swift-ring-builder ${args.slice(1).join(' ')} failed: ${r.out}`);
      }
    }),
  );
  const user = os.userInfo().username;
  const common = `[DEFAULT]\nbind_ip = 127.0.0.1\nswift_dir = ${dir}\ndevices = ${devices}\nmount_check = false\nworkers = 0\nuser = ${user}\nlog_level = WARNING\n`;
  const conf = (name: string, text: string): string => {
    const file = path.join(dir, `${name}.conf`);
    writeFileSync(file, text);
    return file;
  };
  const server = (kind: string, port: number) =>
    conf(
      kind,
      `${common}bind_port = ${port}\n\n[pipeline:main]\npipeline = ${kind}-server\n\n[app:${kind}-server]\nuse = egg:swift#${kind}\n`,
    );
  const proxyConf = conf(
    'proxy',
    `${common}bind_port = ${proxy}\n\n[pipeline:main]\npipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats bulk slo dlo tempauth copy proxy-logging proxy-server\n\n` +
      `[app:proxy-server]\nuse = egg:swift#proxy\naccount_autocreate = true\nallow_account_management = true\n\n` +
      `[filter:tempauth]\nuse = egg:swift#tempauth\nuser_test_tester = testing .admin\n\n` +
      `[filter:cache]\nuse = egg:swift#memcache\nmemcache_servers = 127.0.0.1:${memcache}\n\n` +
      `[filter:slo]\nuse = egg:swift#slo\n\n[filter:dlo]\nuse = egg:swift#dlo\n\n[filter:bulk]\nuse = egg:swift#bulk\n\n` +
      `[filter:catch_errors]\nuse = egg:swift#catch_errors\n\n[filter:gatekeeper]\nuse = egg:swift#gatekeeper\n\n` +
      `[filter:healthcheck]\nuse = egg:swift#healthcheck\n\n[filter:proxy-logging]\nuse = egg:swift#proxy_logging\n\n` +
      `[filter:listing_formats]\nuse = egg:swift#listing_formats\n\n[filter:copy]\nuse = egg:swift#copy\n`,
  );
  const children = [
    spawnLogged(
      'memcached',
      [
        '-l',
        '127.0.0.1',
        '-p',
        String(memcache),
        '-U',
        '0',
        '-m',
        '16',
        ...(user === 'root' ? ['-u', 'root'] : []),
      ],
      path.join(dir, 'memcached.log'),
    ),
    spawnLogged('swift-account-server', [server('account', account)], path.join(dir, 'account.log')),
    spawnLogged('swift-container-server', [server('container', container)], path.join(dir, 'container.log')),
    spawnLogged('swift-object-server', [server('object', object)], path.join(dir, 'object.log')),
    spawnLogged('swift-proxy-server', [proxyConf], path.join(dir, 'proxy.log')),
  ];
  const stop = async () => {
    await stopAll(children);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // The storage servers answer anything (400 to a bare path) once they listen.
    for (const port of [account, container, object])
      await waitHttp(`http://127.0.0.1:${port}/`, 60000, () => true, children);
    await waitHttp(`http://127.0.0.1:${proxy}/healthcheck`, 60000, (s) => s === 200, children);
    await waitAccountWritable(proxy, 60000);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    env: {
      BACKUP_DRIVER: 'swift',
      BACKUP_SWIFT_AUTH_URL: `http://127.0.0.1:${proxy}/auth/v1.0`,
      BACKUP_SWIFT_AUTH_VERSION: '1',
      BACKUP_SWIFT_USER: 'test:tester',
      BACKUP_SWIFT_KEY: 'testing',
      ...(opts.segmentSize ? { BACKUP_SWIFT_SEGMENT_SIZE: String(opts.segmentSize) } : {}),
    },
    dataDir: devices,
    stop,
  };
}

/**
 * Waits until the test account takes a container (created, then removed). Once in CI a healthy
 * proxy still answered 404 to the first container PUT (most likely the account's auto-creation on a
 * loaded machine), which a test would take for a store error.
 */
async function waitAccountWritable(proxy: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const auth = await fetch(`http://127.0.0.1:${proxy}/auth/v1.0`, {
        headers: { 'x-auth-user': 'test:tester', 'x-auth-key': 'testing' },
      });
      await auth.arrayBuffer();
      const url = auth.headers.get('x-storage-url');
      const token = auth.headers.get('x-auth-token');
      if (url && token) {
        const put = await fetch(`${url}/osc-probe`, { method: 'PUT', headers: { 'x-auth-token': token } });
        await put.arrayBuffer();
        last = `PUT container: ${put.status}`;
        if (put.status === 201 || put.status === 202) {
          const del = await fetch(`${url}/osc-probe`, {
            method: 'DELETE',
            headers: { 'x-auth-token': token },
          });
          await del.arrayBuffer();
          return;
        }
      } else last = `auth: ${auth.status}`;
    } catch (err) {
      last = String(err);
    }
    if (Date.now() > until) throw new Error(`Swift's test account never took a container (${last})`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * An S3-protocol server on loopback (@20minutes/s3rver, a maintained fork of s3rver: the original
 * has had no release for years and pins old busboy and fast-xml-parser), in its own process,
 * storing under a fresh directory; access key S3RVER.
 */
export async function startS3(opts: { partSize?: number } = {}): Promise<RunningObjectStore> {
  let lib: string;
  try {
    lib = require.resolve('@20minutes/s3rver');
  } catch {
    throw new Error('The S3 test server is not installed: npm install (devDependency @20minutes/s3rver)');
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'osc-s3-'));
  const port = await freePort();
  // The package ships no bin/ script: its library is started directly. Its v4 signature check
  // canonicalises a bucket request as `/bucket` where the AWS SDK signs `/bucket/` (real S3 takes
  // both), so mismatched signatures are let through; an unknown access key is still refused.
  const options = JSON.stringify({
    directory: dir,
    address: '127.0.0.1',
    port,
    silent: true,
    allowMismatchedSignatures: true,
  });
  const child = spawnLogged(
    process.execPath,
    [
      '-e',
      `const S3rver = require(${JSON.stringify(lib)}); new S3rver(${options}).run().catch((e) => { console.error(e); process.exit(1); });`,
    ],
    path.join(os.tmpdir(), `osc-s3-${port}.log`),
  );
  const stop = async () => {
    await stopAll([child]);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitHttp(`http://127.0.0.1:${port}/`, 30000, (s) => s < 500, [child]);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    env: {
      BACKUP_DRIVER: 's3',
      BACKUP_S3_ENDPOINT_URL: `http://127.0.0.1:${port}`,
      BACKUP_S3_STORE_ACCESS_KEY: 'S3RVER',
      BACKUP_S3_STORE_SECRET_KEY: 'S3RVER',
      ...(opts.partSize ? { BACKUP_S3_PART_SIZE: String(opts.partSize) } : {}),
    },
    dataDir: dir,
    stop,
  };
}
