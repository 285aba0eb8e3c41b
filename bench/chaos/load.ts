import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The workflows of the load. Every std.http call names its execution, task and item in its path. */
export const WORKFLOWS = `version: '2.0'
chaos_seq:
  input:
    - base
    - tag: null
  tasks:
    a:
      action: std.http
      input:
        url: <% $.base %>/call/<% execution().id %>/a/0
      on-success: [b]
    b:
      action: std.http
      input:
        url: <% $.base %>/call/<% execution().id %>/b/0
      on-success: [c]
    c:
      action: std.http
      input:
        url: <% $.base %>/call/<% execution().id %>/c/0
chaos_items:
  input: [base, items]
  tasks:
    fan:
      with-items: i in <% $.items %>
      concurrency: 3
      action: std.http
      input:
        url: <% $.base %>/call/<% execution().id %>/fan/<% $.i %>
chaos_parent:
  input: [base]
  tasks:
    pre:
      action: std.http
      input:
        url: <% $.base %>/call/<% execution().id %>/pre/0
      on-success: [child]
    child:
      workflow: chaos_seq
      input:
        base: <% $.base %>
      on-success: [post]
    post:
      action: std.http
      input:
        url: <% $.base %>/call/<% execution().id %>/post/0
chaos_retry:
  input: [base]
  tasks:
    flaky:
      action: std.http
      input:
        url: <% $.base %>/flaky/<% execution().id %>/flaky/0
      retry:
        count: 3
        delay: 1
`;

/** Tasks whose action the counting server fails on purpose (retried by the task's policy). */
export const RETRIED_TASKS: ReadonlySet<string> = new Set(['flaky']);

/** What the load generator saw: requests that failed or were refused (a replica was down, usually). Not used by the checks. */
export interface LoadStats {
  requests: number;
  transportErrors: number;
  serverErrors: number;
  executionsStarted: number;
  cronTriggers: number;
  volumeCycles: number;
  backupCycles: number;
  notes: string[];
}

/** A restore the load saw complete through the API: the checks read its status from the database and hash the files. */
export interface RestoreRecord {
  readonly backupId: string;
  readonly sourceVolumeId: string;
  readonly sourceSha256: string;
  readonly restoredVolumeId: string;
}

interface Reply {
  status: number;
  body: any;
}

/**
 * Speaks to the product's public APIs as a client does, over plain fetch, in noauth mode (token
 * `user:project`). Each request goes to one of the API replicas that are up (waiting up to 30 s
 * for one); a transport error moves to another one, a few times.
 */
export class ApiClient {
  constructor(
    private readonly bases: () => string[],
    private readonly token: string,
    readonly stats: LoadStats,
    /** How long a request waits for a replica to be up (the embedded process restarting after a kill). */
    private readonly replicaWaitMs = 30_000,
  ) {}

  /** Whether any replica of this API is up now. */
  available(): boolean {
    return this.bases().length > 0;
  }

  async request(
    method: string,
    pathname: string,
    body?: unknown,
    contentType = 'application/json',
  ): Promise<Reply | null> {
    // While no replica is up (embedded mode between a kill and the restart) wait for one.
    const deadline = Date.now() + this.replicaWaitMs;
    for (let attempt = 0; attempt < 6 && Date.now() < deadline;) {
      const bases = this.bases();
      const base = bases[Math.floor(Math.random() * bases.length)];
      if (!base) {
        await sleep(500);
        continue;
      }
      attempt += 1;
      this.stats.requests += 1;
      try {
        const res = await fetch(`${base}${pathname}`, {
          method,
          headers: { 'x-auth-token': this.token, 'content-type': contentType, accept: 'application/json' },
          body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
          signal: AbortSignal.timeout(30_000),
        });
        const text = await res.text();
        if (res.status >= 500) this.stats.serverErrors += 1;
        let parsed: unknown = text;
        try {
          parsed = text ? JSON.parse(text) : null;
        } catch {
          /* not JSON */
        }
        return { status: res.status, body: parsed };
      } catch {
        this.stats.transportErrors += 1;
        await sleep(300);
      }
    }
    return null;
  }
}

export interface LoadOptions {
  readonly callBase: string;
  /** Workflow executions started per second. */
  readonly rate: number;
  readonly withItems: number;
  readonly volumeDir: string;
  readonly project: string;
  readonly log: (msg: string) => void;
  /** How long a request waits for an API replica to be up (default 30 s). */
  readonly replicaWaitMs?: number;
}

/**
 * The mixed load: a stream of executions of the four workflows (sequential, with-items,
 * sub-workflow, retried), cron triggers due every minute, and two block-storage actors (volume
 * create/extend/snapshot/delete; write bytes, back up, restore). Runs until `stop()`; every wait
 * on the product is bounded so a stuck resource only ends that cycle.
 */
export class MixedLoad {
  readonly stats: LoadStats = {
    requests: 0,
    transportErrors: 0,
    serverErrors: 0,
    executionsStarted: 0,
    cronTriggers: 0,
    volumeCycles: 0,
    backupCycles: 0,
    notes: [],
  };
  readonly restores: RestoreRecord[] = [];
  readonly cronTriggerIds: string[] = [];
  private running = false;
  private readonly loops: Promise<void>[] = [];
  readonly workflow: ApiClient;
  readonly volume: ApiClient;

  constructor(
    private readonly options: LoadOptions,
    workflowBases: () => string[],
    volumeBases: () => string[],
  ) {
    const token = `chaos:${options.project}`;
    this.workflow = new ApiClient(workflowBases, token, this.stats, options.replicaWaitMs);
    this.volume = new ApiClient(volumeBases, token, this.stats, options.replicaWaitMs);
  }

  /** Registers the workflows and lifts the project's block-storage quotas (the load keeps its restored volumes). */
  async prepare(): Promise<void> {
    const wf = await this.workflow.request('POST', '/v2/workflows', WORKFLOWS, 'text/plain');
    if (wf?.status !== 201) throw new Error(`registering the workflows: ${JSON.stringify(wf)}`);
    const quota = await this.volume.request(
      'PUT',
      `/v3/${this.options.project}/os-quota-sets/${this.options.project}`,
      {
        quota_set: { volumes: -1, gigabytes: -1, snapshots: -1, backups: -1, backup_gigabytes: -1 },
      },
    );
    if (quota?.status !== 200) throw new Error(`setting quotas: ${JSON.stringify(quota)}`);
  }

  start(): void {
    this.running = true;
    this.loops.push(
      this.guard('executions', () => this.executionLoop()),
      this.guard('volumes', () => this.volumeLoop()),
      this.guard('backups', () => this.backupLoop()),
    );
  }

  /** Creates `n` cron triggers due every minute for chaos_seq. */
  async createCronTriggers(n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      const r = await this.workflow.request('POST', '/v2/cron_triggers', {
        name: `chaos-cron-${i}`,
        workflow_name: 'chaos_seq',
        // Mistral refuses two triggers with the same workflow, input and pattern.
        workflow_input: { base: this.options.callBase, tag: `cron-${i}` },
        pattern: '* * * * *',
      });
      if (r?.status !== 201) throw new Error(`creating a cron trigger: ${JSON.stringify(r)}`);
      this.cronTriggerIds.push(r.body.id);
      this.stats.cronTriggers += 1;
    }
  }

  /** Stops starting new work and waits for the actors' current cycles (each bounded). */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  /** Deletes the cron triggers (retried while an API replica is down); returns the ids it could not delete. */
  async deleteCronTriggers(): Promise<string[]> {
    const left: string[] = [];
    for (const id of this.cronTriggerIds) {
      let done = false;
      for (let i = 0; i < 10 && !done; i++) {
        const r = await this.workflow.request('DELETE', `/v2/cron_triggers/${id}`);
        done = r?.status === 204 || r?.status === 404;
        if (!done) await sleep(1000);
      }
      if (!done) left.push(id);
    }
    return left;
  }

  /** Runs an actor again after an unexpected error (noted), until the load stops. */
  private async guard(name: string, actor: () => Promise<void>): Promise<void> {
    while (this.running) {
      try {
        await actor();
      } catch (e) {
        this.note(`${name} actor: ${(e as Error).message}`);
        await sleep(1000);
      }
    }
  }

  private async executionLoop(): Promise<void> {
    const kinds = ['chaos_seq', 'chaos_items', 'chaos_parent', 'chaos_retry'] as const;
    let i = 0;
    const pending = new Set<Promise<void>>();
    while (this.running) {
      if (!this.workflow.available()) {
        // The API is down (embedded mode between a kill and the restart): nothing to start.
        await sleep(250);
        continue;
      }
      const kind = kinds[i++ % kinds.length]!;
      const input: Record<string, unknown> = { base: this.options.callBase };
      if (kind === 'chaos_items')
        input['items'] = Array.from({ length: this.options.withItems }, (_, k) => k);
      const p = this.workflow.request('POST', '/v2/executions', { workflow_name: kind, input }).then((r) => {
        if (r?.status === 201) this.stats.executionsStarted += 1;
        else this.note(`start ${kind}: ${brief(r)}`);
      });
      pending.add(p);
      void p.finally(() => pending.delete(p));
      await sleep(1000 / this.options.rate);
    }
    await Promise.all(pending);
  }

  private async volumeLoop(): Promise<void> {
    const p = `/v3/${this.options.project}`;
    while (this.running) {
      this.stats.volumeCycles += 1;
      const id = await this.createVolume(`chaos-v-${this.stats.volumeCycles}`);
      if (!id) continue;
      if (!(await this.action(id, { 'os-extend': { new_size: 2 } }, ['available']))) continue;
      const snap = await this.volume.request('POST', `${p}/snapshots`, {
        snapshot: { volume_id: id, name: `chaos-s-${id.slice(0, 8)}` },
      });
      if (snap?.status === 202) {
        const sid = snap.body.snapshot.id as string;
        if ((await this.waitStatus(`${p}/snapshots/${sid}`, 'snapshot', ['available'])) === 'available') {
          await this.volume.request('DELETE', `${p}/snapshots/${sid}`);
          await this.waitStatus(`${p}/snapshots/${sid}`, 'snapshot', ['gone']);
        }
      } else this.note(`snapshot create: ${brief(snap)}`);
      await this.volume.request('DELETE', `${p}/volumes/${id}`);
      await this.waitStatus(`${p}/volumes/${id}`, 'volume', ['gone']);
    }
  }

  private async backupLoop(): Promise<void> {
    const p = `/v3/${this.options.project}`;
    while (this.running) {
      this.stats.backupCycles += 1;
      const id = await this.createVolume(`chaos-b-${this.stats.backupCycles}`);
      if (!id) continue;
      // Known bytes at the start and in the middle of the 1 GiB sparse file, as a guest would write them.
      const file = path.join(this.options.volumeDir, `volume-${id}`);
      try {
        const fh = await open(file, 'r+');
        await fh.write(randomBytes(64 * 1024), 0, 64 * 1024, 0);
        await fh.write(randomBytes(64 * 1024), 0, 64 * 1024, 700 * 1024 * 1024 + 13);
        await fh.close();
      } catch (e) {
        this.note(`writing ${file}: ${(e as Error).message}`);
        continue;
      }
      const sourceSha256 = await sha256File(file);
      const b = await this.volume.request('POST', `${p}/backups`, {
        backup: { volume_id: id, name: `chaos-bk-${id.slice(0, 8)}` },
      });
      if (b?.status !== 202) {
        this.note(`backup create: ${brief(b)}`);
        continue;
      }
      const backupId = b.body.backup.id as string;
      if (
        (await this.waitStatus(`${p}/backups/${backupId}`, 'backup', ['available', 'error'])) !== 'available'
      )
        continue;
      // The source goes; the backup is all that is left of its bytes.
      await this.waitStatus(`${p}/volumes/${id}`, 'volume', ['available']);
      await this.volume.request('DELETE', `${p}/volumes/${id}`);
      const r = await this.volume.request('POST', `${p}/backups/${backupId}/restore`, { restore: {} });
      if (r?.status !== 202) {
        this.note(`restore: ${brief(r)}`);
        continue;
      }
      const restoredVolumeId = r.body.restore.volume_id as string;
      this.restores.push({ backupId, sourceVolumeId: id, sourceSha256, restoredVolumeId });
      await this.waitStatus(`${p}/volumes/${restoredVolumeId}`, 'volume', [
        'available',
        'error',
        'error_restoring',
      ]);
    }
  }

  private async createVolume(name: string): Promise<string | null> {
    const p = `/v3/${this.options.project}`;
    const r = await this.volume.request('POST', `${p}/volumes`, { volume: { size: 1, name } });
    if (r?.status !== 202) {
      this.note(`volume create: ${brief(r)}`);
      await sleep(1000);
      return null;
    }
    const id = r.body.volume.id as string;
    return (await this.waitStatus(`${p}/volumes/${id}`, 'volume', ['available', 'error'])) === 'available'
      ? id
      : null;
  }

  private async action(id: string, body: unknown, until: string[]): Promise<boolean> {
    const p = `/v3/${this.options.project}`;
    const r = await this.volume.request('POST', `${p}/volumes/${id}/action`, body);
    if (r?.status !== 202) {
      this.note(`volume action ${JSON.stringify(body)}: ${brief(r)}`);
      return false;
    }
    return until.includes(
      (await this.waitStatus(`${p}/volumes/${id}`, 'volume', [...until, 'error', 'error_extending'])) ?? '',
    );
  }

  /**
   * Polls a resource until its status is one of `statuses` (`gone` = 404), at most 90 s, or until
   * the load stops (what is still in flight is then the settle phase's business); returns the last
   * status seen.
   */
  private async waitStatus(url: string, key: string, statuses: string[]): Promise<string | null> {
    const deadline = Date.now() + 90_000;
    let last: string | null = null;
    while (Date.now() < deadline && this.running) {
      const r = await this.volume.request('GET', url);
      if (r?.status === 404) last = 'gone';
      else if (r?.status === 200) last = r.body[key]?.status ?? null;
      if (last !== null && statuses.includes(last)) return last;
      await sleep(500);
    }
    if (this.running) this.note(`${url} still ${last} after 90 s (wanted ${statuses.join('|')})`);
    return last;
  }

  private note(msg: string): void {
    if (this.stats.notes.length < 200) this.stats.notes.push(`${new Date().toISOString()} ${msg}`);
    this.options.log(`load: ${msg}`);
  }
}

/** A reply in a note: status and the start of the body, or that no replica answered. */
const brief = (r: Reply | null): string =>
  r ? `${r.status} ${String(JSON.stringify(r.body)).slice(0, 200)}` : 'no API replica answered';

/** SHA-256 of a whole file (sparse holes read as zeros). */
export function sha256File(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(file, { highWaterMark: 1024 * 1024 })
      .on('data', (d) => h.update(d))
      .on('error', reject)
      .on('end', () => resolve(h.digest('hex')));
  });
}
