import { setTimeout as delay } from 'node:timers/promises';
import { type ActionContext, type ActionOutcome } from '@osc/contracts';
import { EgressPolicy } from './std/egress';

/**
 * Process-wide settings of the standard actions (one object per executor process, built by the app's
 * `config.ts`). Every field has a safe default; see {@link resolveActionsConfig}.
 */
export interface ActionsConfig {
  http?: {
    /** Applied when the action gives no `timeout` (seconds), so a silent peer cannot pin an executor. Default 60 s. */
    defaultTimeoutMs?: number;
    /** A response body larger than this fails the action. Default 10 MiB. */
    maxResponseBytes?: number;
    /**
     * CIDRs std.http must not reach (e.g. `169.254.0.0/16` for cloud metadata, `127.0.0.0/8`); checked
     * on every connection and redirect. Default none.
     */
    deniedNetworks?: readonly string[];
  };
  email?: {
    /** Connection/greeting/socket timeout of one SMTP conversation. Default 30 s. */
    timeoutMs?: number;
    /** Verify the server certificate on STARTTLS. Default true. */
    rejectUnauthorized?: boolean;
  };
  javascript?: {
    /** Wall-clock limit of one script run. Default 5 s. */
    timeLimitMs?: number;
    /** Heap limit of the sandbox. Default 64 MiB. */
    memoryLimitBytes?: number;
    /** Sandbox stack limit. Default 512 KiB. */
    maxStackBytes?: number;
  };
  /** Action names refused by configuration (DSL-17.6); running one fails the action with a clear message. */
  disabled?: readonly string[];
}

export interface ResolvedActionsConfig {
  http: { defaultTimeoutMs: number; maxResponseBytes: number; egress: EgressPolicy };
  email: { timeoutMs: number; rejectUnauthorized: boolean };
  javascript: { timeLimitMs: number; memoryLimitBytes: number; maxStackBytes: number };
  disabled: ReadonlySet<string>;
}

export const resolveActionsConfig = (config: ActionsConfig = {}): ResolvedActionsConfig => ({
  http: {
    defaultTimeoutMs: config.http?.defaultTimeoutMs ?? 60_000,
    maxResponseBytes: config.http?.maxResponseBytes ?? 10 * 1024 * 1024,
    egress: new EgressPolicy(config.http?.deniedNetworks ?? []),
  },
  email: {
    timeoutMs: config.email?.timeoutMs ?? 30_000,
    rejectUnauthorized: config.email?.rejectUnauthorized ?? true,
  },
  javascript: {
    timeLimitMs: config.javascript?.timeLimitMs ?? 5_000,
    memoryLimitBytes: config.javascript?.memoryLimitBytes ?? 64 * 1024 * 1024,
    maxStackBytes: config.javascript?.maxStackBytes ?? 512 * 1024,
  },
  disabled: new Set(config.disabled ?? []),
});

/** Time source of the actions; tests may pass their own. `sleep` must reject when `signal` aborts. */
export interface ActionClock {
  now(): number;
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export const systemClock: ActionClock = {
  now: () => Date.now(),
  sleep: async (ms, signal) => {
    await delay(ms, undefined, { signal });
  },
};

/** What one action implementation receives besides its input. */
export interface ActionScope {
  readonly ctx: ActionContext;
  /** Aborted on timeout or when the caller's `ctx.signal` aborts; implementations must honour it. */
  readonly signal: AbortSignal;
  readonly config: ResolvedActionsConfig;
  readonly clock: ActionClock;
}

/**
 * One standard action. `className` is the reference implementation's Python class path, used in the
 * texts clients see (`Invalid input [name=std.echo, class=mistral.actions.std_actions.EchoAction, ...]`).
 * `run` gets the input with declared defaults filled in. It returns an outcome, or throws
 * {@link ActionException} (any throw counts) which becomes the error text of DSL-14.3.
 */
export interface ActionImplementation {
  readonly name: string;
  readonly className: string;
  /** Python's repr of the action object, used in the exception text; default `<class object at 0x…>`. */
  readonly repr?: string;
  run(input: Readonly<Record<string, unknown>>, scope: ActionScope): Promise<ActionOutcome>;
}

/** An action failed the way Mistral's `ActionException` does: `message` is the `msg` of DSL-14.3. */
export class ActionException extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ActionException';
  }
}

/**
 * The caller's `ctx.signal` aborted the run (shutdown, execution cancelled): there is no outcome to
 * report; the job may be retried by whoever owns it. Thrown by `run`, never turned into an action error.
 */
export class ActionAbortedError extends Error {
  constructor(readonly actionName: string) {
    super(`Action ${actionName} was aborted before it completed`);
    this.name = 'ActionAbortedError';
  }
}

export const success = (result: unknown): ActionOutcome => ({ kind: 'success', result });
export const failure = (error: unknown): ActionOutcome => ({ kind: 'error', error });
