import { createHash } from 'node:crypto';
import { types } from 'node:util';
import { BACKUP_DRIVER_IDS } from '@osc/block-storage-domain';
import { InvalidInputError } from '@osc/errors';
import { BackupStoreError, type BackupStore } from './backup-store';

/** The Swift driver's settings (Cinder's `backup_swift_*` options, upper-cased). */
export interface SwiftStoreConfig {
  readonly driver: 'swift';
  /** Storage URL used instead of the one authentication returns (BACKUP_SWIFT_URL). */
  readonly url: string | null;
  readonly authUrl: string;
  /** `1`: TempAuth/Swauth (`X-Auth-User`/`X-Auth-Key`); `3`: Keystone v3 password. */
  readonly authVersion: '1' | '3';
  readonly user: string;
  readonly key: string;
  /** Keystone v3: the project the token is scoped to, and the user's and project's domains. */
  readonly project: string | null;
  readonly userDomain: string;
  readonly projectDomain: string;
  /** Keystone v3: the catalog interface of the object-store endpoint (public, internal, admin). */
  readonly endpointInterface: string;
  readonly region: string | null;
  /** Default container (BACKUP_SWIFT_CONTAINER). */
  readonly container: string;
  /** Objects larger than this go up as a static large object of segments this large. */
  readonly segmentSize: number;
  readonly retryAttempts: number;
  readonly retryBackoffMs: number;
  readonly timeoutMs: number;
}

interface Session {
  readonly storageUrl: string;
  readonly token: string;
}

const md5 = (b: Uint8Array): string => createHash('md5').update(b).digest('hex');
const encodeName = (name: string): string => name.split('/').map(encodeURIComponent).join('/');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const retriable = (status: number): boolean => status === 408 || status === 429 || status >= 500;

/**
 * The Swift driver (cinder.backup.drivers.swift): one container per backup container (default
 * `volumebackups`), objects named as Cinder names them (BS-11.3). Objects larger than the segment
 * size are stored as a static large object whose segments live in `<container>_segments` (the
 * python-swiftclient layout); deleting a backup deletes manifests with their segments. Every PUT
 * carries the body's MD5 as ETag, so Swift refuses a damaged upload. Requests are retried on
 * connection errors, 408, 429 and 5xx with a growing pause; a 401 re-authenticates once.
 */
export class SwiftBackupStore implements BackupStore {
  readonly kind = 'object-store' as const;
  readonly driverId = BACKUP_DRIVER_IDS.swift;
  private session: Promise<Session> | null = null;
  private readonly segmentContainers = new Set<string>();

  constructor(private readonly config: SwiftStoreConfig) {}

  defaultContainer(): string {
    return this.config.container;
  }

  checkContainer(container: string): void {
    if (container.length === 0 || container.includes('/') || Buffer.byteLength(container) > 256)
      throw new InvalidInputError(
        `Invalid backup: container ${container.slice(0, 100)} is not a Swift container name (1 to 256 bytes, no "/").`,
      );
  }

  async ensureContainer(container: string): Promise<void> {
    this.checkContainer(container);
    await this.request('PUT', container, null, { expect: [201, 202] });
  }

  async write(container: string, name: string, data: Buffer): Promise<void> {
    if (data.length <= this.config.segmentSize) {
      await this.request('PUT', container, name, { body: data, headers: { etag: md5(data) }, expect: [201] });
      return;
    }
    const segments = `${container}_segments`;
    if (!this.segmentContainers.has(segments)) {
      await this.request('PUT', segments, null, { expect: [201, 202] });
      this.segmentContainers.add(segments);
    }
    const size = this.config.segmentSize;
    const stamp = (Date.now() / 1000).toFixed(6);
    const manifest: { path: string; etag: string; size_bytes: number }[] = [];
    for (let off = 0, i = 0; off < data.length; off += size, i++) {
      const part = data.subarray(off, Math.min(off + size, data.length));
      const segName = `${name}/slo/${stamp}/${data.length}/${size}/${String(i).padStart(8, '0')}`;
      const etag = md5(part);
      await this.request('PUT', segments, segName, { body: part, headers: { etag }, expect: [201] });
      manifest.push({ path: `/${segments}/${segName}`, etag, size_bytes: part.length });
    }
    await this.request('PUT', container, name, {
      query: 'multipart-manifest=put',
      body: Buffer.from(JSON.stringify(manifest)),
      expect: [201],
    });
  }

  async read(container: string, name: string): Promise<Buffer> {
    const res = await this.request('GET', container, name, { expect: [200] });
    return res.body;
  }

  async list(container: string, prefix: string): Promise<string[]> {
    return (await this.entries(container, prefix)).map((e) => e.name);
  }

  /** The listing of `prefix`; `slo` marks static large object manifests (`slo_etag`, Swift ≥ 2.20). */
  private async entries(container: string, prefix: string): Promise<{ name: string; slo: boolean }[]> {
    const out: { name: string; slo: boolean }[] = [];
    let marker = '';
    for (;;) {
      const query = `format=json&limit=10000&prefix=${encodeURIComponent(prefix)}&marker=${encodeURIComponent(marker)}`;
      const res = await this.request('GET', container, null, { query, expect: [200, 204, 404] });
      if (res.status !== 200) break;
      const page = JSON.parse(res.body.toString('utf8')) as { name: string; slo_etag?: string }[];
      if (page.length === 0) break;
      for (const o of page) out.push({ name: o.name, slo: o.slo_etag !== undefined });
      marker = (page[page.length - 1] as { name: string }).name;
    }
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async deletePrefix(container: string, prefix: string): Promise<void> {
    for (const { name, slo } of await this.entries(container, prefix)) {
      if (!slo) {
        await this.request('DELETE', container, name, { expect: [204, 404] });
        continue;
      }
      // A static large object goes with its segments.
      const res = await this.request('DELETE', container, name, {
        query: 'multipart-manifest=delete',
        headers: { accept: 'application/json' },
        expect: [200, 404],
      });
      if (res.status === 200 && res.body.length > 0) {
        const report = JSON.parse(res.body.toString('utf8')) as {
          'Response Status'?: string;
          Errors?: unknown[];
        };
        const status = report['Response Status'] ?? '';
        if (!/^(200|404)/.test(status) || (report.Errors ?? []).length > 0)
          throw new BackupStoreError(
            `Swift could not delete ${container}/${name}: ${status} ${JSON.stringify(report.Errors ?? []).slice(0, 300)}`,
          );
      }
    }
    // Segments a failed upload left without a manifest.
    const segments = `${container}_segments`;
    for (const name of await this.list(segments, prefix))
      await this.request('DELETE', segments, name, { expect: [204, 404] });
  }

  /** Nothing to release: every request opens and ends its own exchange. */
  close(): Promise<void> {
    return Promise.resolve();
  }

  private authenticate(): Promise<Session> {
    this.session ??= (this.config.authVersion === '1' ? this.authV1() : this.authV3()).catch(
      (err: unknown) => {
        this.session = null;
        throw err;
      },
    );
    return this.session;
  }

  private async authV1(): Promise<Session> {
    const res = await this.fetchOnce(
      this.config.authUrl,
      {
        method: 'GET',
        headers: { 'x-auth-user': this.config.user, 'x-auth-key': this.config.key },
      },
      'authenticate with',
    );
    await res.arrayBuffer();
    const token = res.headers.get('x-auth-token');
    const storageUrl = this.config.url ?? res.headers.get('x-storage-url');
    if (res.status < 200 || res.status >= 300 || token === null || storageUrl === null)
      throw new BackupStoreError(
        `Swift authentication at ${this.config.authUrl} failed: ${res.status} ${res.statusText}`,
        res.status,
      );
    return { storageUrl: storageUrl.replace(/\/+$/, ''), token };
  }

  private async authV3(): Promise<Session> {
    const c = this.config;
    const body = {
      auth: {
        identity: {
          methods: ['password'],
          password: { user: { name: c.user, password: c.key, domain: { name: c.userDomain } } },
        },
        scope: { project: { name: c.project, domain: { name: c.projectDomain } } },
      },
    };
    const url = `${c.authUrl.replace(/\/+$/, '')}/auth/tokens`;
    const res = await this.fetchOnce(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      },
      'authenticate with',
    );
    const text = await res.text();
    const token = res.headers.get('x-subject-token');
    if (res.status !== 201 || token === null)
      throw new BackupStoreError(
        `Keystone authentication at ${url} failed: ${res.status} ${res.statusText}`,
        res.status,
      );
    if (c.url !== null) return { storageUrl: c.url.replace(/\/+$/, ''), token };
    let storageUrl: string | undefined;
    try {
      const doc = JSON.parse(text) as {
        token?: {
          catalog?: {
            type?: string;
            endpoints?: { interface?: string; region?: string; region_id?: string; url?: string }[];
          }[];
        };
      };
      const service = doc.token?.catalog?.find((s) => s.type === 'object-store');
      storageUrl = service?.endpoints?.find(
        (e) =>
          e.interface === c.endpointInterface &&
          (c.region === null || e.region === c.region || e.region_id === c.region),
      )?.url;
    } catch {
      // reported below
    }
    if (storageUrl === undefined)
      throw new BackupStoreError(
        `Keystone's catalog at ${url} has no ${c.endpointInterface} object-store endpoint${c.region === null ? '' : ` in region ${c.region}`}; set BACKUP_SWIFT_URL.`,
      );
    return { storageUrl: storageUrl.replace(/\/+$/, ''), token };
  }

  private async fetchOnce(url: string, init: RequestInit, what: string): Promise<Response> {
    try {
      return await fetch(url, { ...init, signal: AbortSignal.timeout(this.config.timeoutMs) });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new BackupStoreError(
        `Could not ${what} Swift at ${url.split('?')[0]}: ${cause?.code ?? cause?.message ?? (err as Error).message}`,
      );
    }
  }

  /** One Swift request, retried and re-authenticated as needed; answers outside `expect` throw. */
  private async request(
    method: 'GET' | 'PUT' | 'DELETE' | 'HEAD',
    container: string,
    object: string | null,
    o: { query?: string; body?: Buffer; headers?: Record<string, string>; expect: number[] },
  ): Promise<{ status: number; body: Buffer }> {
    const what = object === null ? container : `${container}/${object}`;
    // fetch refuses a body in shared memory, as the chunk buffers are (chunk-workers.ts): copied once
    const sent =
      o.body !== undefined && types.isSharedArrayBuffer(o.body.buffer) ? Buffer.from(o.body) : o.body;
    let reauthenticated = false;
    for (let attempt = 1; ; attempt++) {
      const s = await this.authenticate();
      const url = `${s.storageUrl}/${encodeURIComponent(container)}${object === null ? '' : `/${encodeName(object)}`}${o.query ? `?${o.query}` : ''}`;
      let res: Response;
      try {
        res = await this.fetchOnce(
          url,
          {
            method,
            headers: {
              'x-auth-token': s.token,
              ...(sent ? { 'content-length': String(sent.length) } : {}),
              ...o.headers,
            },
            body: sent,
          },
          `${method} ${what} on`,
        );
      } catch (err) {
        if (attempt < this.config.retryAttempts) {
          await sleep(this.config.retryBackoffMs * attempt);
          continue;
        }
        throw err;
      }
      const body = Buffer.from(await res.arrayBuffer());
      if (o.expect.includes(res.status)) return { status: res.status, body };
      if (res.status === 401 && !reauthenticated) {
        reauthenticated = true;
        this.session = null;
        continue;
      }
      if (retriable(res.status) && attempt < this.config.retryAttempts) {
        await sleep(this.config.retryBackoffMs * attempt);
        continue;
      }
      const reason = res.status === 404 ? 'not found' : `${res.status} ${res.statusText}`;
      throw new BackupStoreError(`Swift ${method} ${what} failed: ${reason}`, res.status);
    }
  }
}
