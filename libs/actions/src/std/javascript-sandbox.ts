import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

export interface JavaScriptLimits {
  timeLimitMs: number;
  memoryLimitBytes: number;
  maxStackBytes: number;
}

/** Why a script did not produce a value; `message` is what the action error reports. */
export class JavaScriptError extends Error {
  constructor(
    readonly reason: 'error' | 'time-limit' | 'memory-limit' | 'aborted' | 'crash',
    message: string,
  ) {
    super(message);
    this.name = 'JavaScriptError';
  }
}

type Reply =
  | { id: number; ok: true; json: string }
  | { id: number; ok: false; reason: JavaScriptError['reason']; message: string };

/** What a worker is asked to do (see quickjs-worker.js). */
type Request =
  | { kind: 'script'; script: string; context: unknown }
  | { kind: 'module-check'; source: string; filename: string }
  | {
      kind: 'module-run';
      source: string;
      filename: string;
      className: string;
      input: unknown;
      context: unknown;
    };

interface Job {
  request: Request;
  limits: JavaScriptLimits;
  signal?: AbortSignal;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker;
  job?: Job & { id: number; cleanup(): void };
}

/** Extra time the watchdog grants beyond the script's own limit before it kills the worker. */
const WATCHDOG_GRACE_MS = 2_000;

/**
 * Runs std.javascript scripts and dynamic actions in QuickJS (WASM) on worker threads, so a script never blocks the event
 * loop of the executor. Each worker runs one script at a time in a fresh QuickJS runtime (see
 * quickjs-worker.js); up to `maxWorkers` run at once and further scripts wait. Three fences bound a
 * script: QuickJS's interrupt deadline (time), its heap limit (memory) and stack limit, plus a
 * watchdog here that terminates a worker which overstays its time limit. An aborted `signal`
 * terminates the worker running that script. Idle workers do not keep the process alive.
 */
export class JavaScriptSandbox {
  private readonly slots = new Set<Slot>();
  private readonly waiting: Job[] = [];
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: { maxWorkers?: number } = {}) {}

  evaluate(
    script: string,
    context: unknown,
    limits: JavaScriptLimits,
    signal?: AbortSignal,
  ): Promise<unknown> {
    return this.submit({ kind: 'script', script, context }, limits, signal);
  }

  /**
   * Compiles `source` as an ES module without running any of it. Rejects with a {@link JavaScriptError}
   * whose message names the error and, for a syntax error, its `(line L, column C)`; an `import` of
   * anything is refused too (the sandbox has no modules to give).
   */
  async checkModule(source: string, filename: string, limits: JavaScriptLimits): Promise<void> {
    await this.submit({ kind: 'module-check', source, filename }, limits);
  }

  /**
   * Loads `source` as an ES module, constructs its export `className` with `input` (a JSON copy) and
   * returns the JSON copy of what `run(context)` returns or resolves to. Rejects with
   * {@link JavaScriptError} when loading, the constructor or `run` throw, the export is not a class with
   * a `run` method, or a limit is hit.
   */
  runModule(
    call: { source: string; filename: string; className: string; input: unknown; context: unknown },
    limits: JavaScriptLimits,
    signal?: AbortSignal,
  ): Promise<unknown> {
    return this.submit({ kind: 'module-run', ...call }, limits, signal);
  }

  private submit(request: Request, limits: JavaScriptLimits, signal?: AbortSignal): Promise<unknown> {
    if (this.closed)
      return Promise.reject(new JavaScriptError('aborted', 'the JavaScript sandbox is closed'));
    if (signal?.aborted) return Promise.reject(new JavaScriptError('aborted', 'the script was aborted'));
    return new Promise<unknown>((resolve, reject) => {
      this.waiting.push({ request, limits, signal, resolve, reject });
      this.pump();
    });
  }

  /** Terminates every worker; running and waiting scripts fail as aborted. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.waiting.splice(0))
      job.reject(new JavaScriptError('aborted', 'the JavaScript sandbox is closed'));
    await Promise.all(
      [...this.slots].map((slot) =>
        this.kill(slot, new JavaScriptError('aborted', 'the JavaScript sandbox is closed')),
      ),
    );
  }

  private pump(): void {
    while (this.waiting.length > 0) {
      let slot = [...this.slots].find((s) => !s.job);
      if (!slot) {
        if (this.slots.size >= (this.options.maxWorkers ?? 2)) return;
        slot = this.spawn();
      }
      const job = this.waiting.shift();
      if (!job) return;
      if (job.signal?.aborted) {
        job.reject(new JavaScriptError('aborted', 'the script was aborted'));
        continue;
      }
      this.start(slot, job);
    }
  }

  private spawn(): Slot {
    const worker = new Worker(join(__dirname, 'quickjs-worker.js'));
    worker.unref();
    const slot: Slot = { worker };
    worker.on('message', (reply: Reply) => this.onReply(slot, reply));
    worker.on(
      'error',
      (err) =>
        void this.kill(slot, new JavaScriptError('crash', `the sandbox worker failed: ${err.message}`)),
    );
    worker.on('exit', () => {
      this.slots.delete(slot);
      slot.job?.reject(new JavaScriptError('crash', 'the sandbox worker stopped'));
      slot.job?.cleanup();
      slot.job = undefined;
      this.pump();
    });
    this.slots.add(slot);
    return slot;
  }

  private start(slot: Slot, job: Job): void {
    const id = this.nextId++;
    const watchdog = setTimeout(
      () =>
        void this.kill(
          slot,
          new JavaScriptError(
            'time-limit',
            `the script exceeded its time limit of ${job.limits.timeLimitMs} ms`,
          ),
        ),
      job.limits.timeLimitMs + WATCHDOG_GRACE_MS,
    );
    const onAbort = (): void =>
      void this.kill(slot, new JavaScriptError('aborted', 'the script was aborted'));
    job.signal?.addEventListener('abort', onAbort, { once: true });
    slot.job = {
      ...job,
      id,
      cleanup: () => {
        clearTimeout(watchdog);
        job.signal?.removeEventListener('abort', onAbort);
      },
    };
    slot.worker.ref();
    slot.worker.postMessage({ id, ...job.request, limits: job.limits });
  }

  private onReply(slot: Slot, reply: Reply): void {
    const job = slot.job;
    if (!job || job.id !== reply.id) return;
    job.cleanup();
    slot.job = undefined;
    slot.worker.unref();
    if (reply.ok) {
      job.resolve(JSON.parse(reply.json) as unknown);
    } else {
      job.reject(new JavaScriptError(reply.reason, reply.message));
      // A trapped WASM module cannot be trusted again: replace the worker.
      if (reply.reason === 'crash') void this.kill(slot);
    }
    this.pump();
  }

  private async kill(slot: Slot, error?: JavaScriptError): Promise<void> {
    const job = slot.job;
    slot.job = undefined;
    this.slots.delete(slot);
    if (job) {
      job.cleanup();
      job.reject(error ?? new JavaScriptError('crash', 'the sandbox worker stopped'));
    }
    await slot.worker.terminate();
    this.pump();
  }
}

let shared: JavaScriptSandbox | undefined;
/** The process-wide sandbox std.javascript uses. */
export const sharedJavaScriptSandbox = (): JavaScriptSandbox => (shared ??= new JavaScriptSandbox());

/**
 * Evaluates `script` as the body of a function (so it ends with `return …`, as in the reference) with
 * `$` a deep copy of `context` (JSON), in the shared sandbox. The result is converted through JSON
 * (`undefined` and functions become null). Rejects with {@link JavaScriptError}.
 */
export const evaluateJavaScript = (
  script: string,
  context: unknown,
  limits: JavaScriptLimits,
  signal?: AbortSignal,
): Promise<unknown> => sharedJavaScriptSandbox().evaluate(script, context, limits, signal);
