import {
  newQuickJSWASMModuleFromVariant,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
  shouldInterruptAfterDeadline,
} from 'quickjs-emscripten-core';
import { ActionException, type ActionImplementation, success } from '../action';

export interface JavaScriptLimits {
  timeLimitMs: number;
  memoryLimitBytes: number;
  maxStackBytes: number;
}

/** Why a script did not produce a value; `message` is what the action error reports. */
export class JavaScriptError extends Error {
  constructor(
    readonly reason: 'error' | 'time-limit' | 'memory-limit',
    message: string,
  ) {
    super(message);
    this.name = 'JavaScriptError';
  }
}

/**
 * The release build of QuickJS, loaded with plain `require` (the package's own variant object uses a
 * dynamic `import()`, which jest's module system cannot run).
 */
const RELEASE_SYNC: QuickJSSyncVariant = {
  type: 'sync',
  importFFI: () =>
    Promise.resolve((require('@jitl/quickjs-wasmfile-release-sync/ffi') as { QuickJSFFI: never }).QuickJSFFI),
  importModuleLoader: () =>
    Promise.resolve(require('@jitl/quickjs-wasmfile-release-sync/emscripten-module') as never),
};

let modulePromise: Promise<QuickJSWASMModule> | undefined;
/** One WASM module per process; a module that aborted (WASM trap) is replaced on the next run. */
const quickJs = (): Promise<QuickJSWASMModule> =>
  (modulePromise ??= newQuickJSWASMModuleFromVariant(RELEASE_SYNC));

/**
 * Evaluates `script` as the body of a function (so it ends with `return …`, as in the reference) in a
 * fresh QuickJS runtime: a WASM interpreter with its own heap and globals, nothing of the host reachable
 * (no `process`, `require`, host `globalThis`, I/O or timers). `$` is a deep copy of `context` (JSON).
 * The result is converted through JSON (`undefined` and functions become null). A run longer than
 * `timeLimitMs` or a heap above `memoryLimitBytes` stops the script with {@link JavaScriptError}.
 * The interpreter runs synchronously on the calling thread, bounded by the time limit.
 */
export async function evaluateJavaScript(
  script: string,
  context: unknown,
  limits: JavaScriptLimits,
): Promise<unknown> {
  const module = await quickJs();
  const runtime = module.newRuntime();
  let interrupted = false;
  const deadline = shouldInterruptAfterDeadline(Date.now() + limits.timeLimitMs);
  runtime.setInterruptHandler((rt) => {
    interrupted = deadline(rt) === true;
    return interrupted;
  });
  runtime.setMemoryLimit(limits.memoryLimitBytes);
  runtime.setMaxStackSize(limits.maxStackBytes);
  const vm = runtime.newContext();
  try {
    const contextJson = JSON.stringify(context ?? null) ?? 'null';
    const source =
      `var $ = JSON.parse(${JSON.stringify(contextJson)});\n` +
      `(function () { var r = (function f() {\n${script}\n})();\n` +
      `var s = r === undefined ? undefined : JSON.stringify(r); return s === undefined ? 'null' : s; })()`;
    const result = vm.evalCode(source, 'script.js');
    if (result.error) {
      const dumped: unknown = vm.dump(result.error);
      result.error.dispose();
      throw classify(dumped, interrupted, limits);
    }
    const json: unknown = vm.dump(result.value);
    result.value.dispose();
    return typeof json === 'string' ? (JSON.parse(json) as unknown) : null;
  } catch (e) {
    if (e instanceof JavaScriptError) throw e;
    // A trap inside the WASM module (e.g. an abort under memory pressure) leaves it unusable.
    modulePromise = undefined;
    throw new JavaScriptError('error', e instanceof Error ? e.message : String(e));
  } finally {
    try {
      vm.dispose();
      runtime.dispose();
    } catch {
      modulePromise = undefined;
    }
  }
}

function classify(dumped: unknown, interrupted: boolean, limits: JavaScriptLimits): JavaScriptError {
  const d = (dumped ?? {}) as { name?: unknown; message?: unknown };
  const name = typeof d.name === 'string' ? d.name : 'Error';
  const message =
    typeof d.message === 'string' ? d.message : typeof dumped === 'string' ? dumped : JSON.stringify(dumped);
  if (interrupted)
    return new JavaScriptError(
      'time-limit',
      `the script exceeded its time limit of ${limits.timeLimitMs} ms`,
    );
  if (dumped === null || /out of memory/i.test(message)) {
    return new JavaScriptError(
      'memory-limit',
      `the script exceeded its memory limit of ${limits.memoryLimitBytes} bytes`,
    );
  }
  return new JavaScriptError('error', `${name}: ${message}`);
}

const runScript: ActionImplementation['run'] = async (input, { config, ctx }) => {
  const script = input['script'];
  if (typeof script !== 'string')
    throw new ActionException('JavaScriptAction failed: script must be a string');
  const timeLimitMs =
    ctx.timeoutMs !== undefined
      ? Math.min(ctx.timeoutMs, config.javascript.timeLimitMs)
      : config.javascript.timeLimitMs;
  try {
    return success(
      await evaluateJavaScript(script, input['context'] ?? null, { ...config.javascript, timeLimitMs }),
    );
  } catch (e) {
    throw new ActionException(`JavaScriptAction failed: ${e instanceof Error ? e.message : String(e)}`);
  }
};

/** std.javascript(script, context): the script's return value, computed in the sandbox above. */
export const javascriptAction: ActionImplementation = {
  name: 'std.javascript',
  className: 'mistral.actions.std_actions.JavaScriptAction',
  run: runScript,
};

/** std.js: alias of std.javascript. */
export const jsAction: ActionImplementation = { ...javascriptAction, name: 'std.js' };
