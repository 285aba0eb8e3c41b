import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '../..');

/** Each distributed app and the variable that sets the port answering /readyz (its API port for the two APIs). */
export const DISTRIBUTED_APPS: readonly (readonly [app: string, portVar: string])[] = [
  ['workflow-api', 'WORKFLOW_API_PORT'],
  ['workflow-engine', 'WORKFLOW_ENGINE_HEALTH_PORT'],
  ['cron-scheduler', 'CRON_SCHEDULER_HEALTH_PORT'],
  ['volume-api', 'VOLUME_API_PORT'],
  ['scheduler-stats', 'SCHEDULER_STATS_HEALTH_PORT'],
  ['backup-worker', 'BACKUP_WORKER_HEALTH_PORT'],
];

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A product process slot: the same app, ports and environment across the restarts after each kill. */
export interface ProcessSlot {
  /** `workflow-api#1`, or `embedded`. */
  readonly name: string;
  readonly app: string;
  /** Ports answering /readyz; every one must answer 200 for the slot to count as up. */
  readonly readyPorts: readonly number[];
  readonly env: NodeJS.ProcessEnv;
  readonly entry: string;
  child: ChildProcess | null;
  up: boolean;
  starts: number;
  /** The last 16 KiB the process wrote (stdout and stderr), for a failure report. */
  tail: string;
  /** Every chunk the process writes (stdout and stderr), for a caller reading its log lines. */
  readonly onOutput?: (chunk: string) => void;
}

/**
 * Starts, kills and restarts the product's processes. A kill is SIGKILL (no shutdown hook runs);
 * the slot is started again at once with the same environment and counts as up again when all its
 * /readyz answer 200.
 */
export class ProductSupervisor {
  readonly slots: ProcessSlot[] = [];
  private stopping = false;

  constructor(
    private readonly log: (msg: string) => void,
    private readonly readyTimeoutMs: number,
  ) {}

  add(
    name: string,
    app: string,
    entry: string,
    readyPorts: number[],
    env: NodeJS.ProcessEnv,
    onOutput?: (chunk: string) => void,
  ): ProcessSlot {
    const slot: ProcessSlot = {
      name,
      app,
      entry,
      readyPorts,
      env,
      child: null,
      up: false,
      starts: 0,
      tail: '',
      onOutput,
    };
    this.slots.push(slot);
    return slot;
  }

  /** Spawns the slot's process and waits until it is ready; throws (with its output) when it is not in time. */
  async start(slot: ProcessSlot): Promise<void> {
    slot.up = false;
    slot.starts += 1;
    const child = spawn(process.execPath, ['-r', '@swc-node/register', slot.entry], {
      cwd: ROOT,
      env: { ...process.env, ...slot.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    slot.child = child;
    const keep = (d: Buffer) => {
      slot.tail = (slot.tail + d.toString()).slice(-16_384);
      slot.onOutput?.(d.toString());
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const deadline = Date.now() + this.readyTimeoutMs;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(
          `${slot.name} exited during start (${child.exitCode ?? child.signalCode}):\n${slot.tail}`,
        );
      }
      if (slot.child !== child) return; // killed and restarted meanwhile
      if (await this.allReady(slot.readyPorts)) break;
      if (Date.now() > deadline)
        throw new Error(`${slot.name} not ready within ${this.readyTimeoutMs} ms:\n${slot.tail}`);
      await sleep(250);
    }
    slot.up = true;
  }

  /** SIGKILL, wait for the exit, start again; resolves when the new process is ready. */
  async killAndRestart(slot: ProcessSlot): Promise<void> {
    await this.kill(slot, 'SIGKILL');
    if (this.stopping) return;
    await this.start(slot);
  }

  /** Stops every process: SIGTERM, SIGKILL for those still alive after `graceMs`. */
  async stopAll(graceMs = 20_000): Promise<void> {
    this.stopping = true;
    await Promise.all(
      this.slots.map(async (s) => {
        const child = s.child;
        if (!child || child.exitCode !== null || child.signalCode !== null) return;
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await gone;
        clearTimeout(timer);
        s.up = false;
      }),
    );
  }

  private async kill(slot: ProcessSlot, signal: NodeJS.Signals): Promise<void> {
    slot.up = false;
    const child = slot.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    await gone;
  }

  private async allReady(ports: readonly number[]): Promise<boolean> {
    for (const port of ports) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) });
        await res.arrayBuffer();
        if (res.status !== 200) return false;
      } catch {
        return false;
      }
    }
    return true;
  }
}
