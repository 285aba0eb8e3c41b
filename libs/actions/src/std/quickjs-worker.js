'use strict';
// Worker thread of std.javascript and of dynamic actions (see javascript-sandbox.ts). Plain CommonJS
// so that it runs in a bare worker without a TypeScript loader. One request at a time, in:
//   { id, kind: 'script', script, context, limits }                  std.javascript
//   { id, kind: 'module-check', source, filename, limits }          a code source's syntax
//   { id, kind: 'module-run', source, filename, className, input, context, limits }   a dynamic action
// out: { id, ok: true, json } or { id, ok: false, reason, message }. Every script gets a fresh QuickJS
// runtime and context (a WASM interpreter with its own heap and globals: nothing of Node is reachable),
// bounded by an interrupt deadline, a heap limit and a stack limit.
const { parentPort } = require('node:worker_threads');
const { newQuickJSWASMModuleFromVariant, shouldInterruptAfterDeadline } = require('quickjs-emscripten-core');

const variant = {
  type: 'sync',
  importFFI: () => Promise.resolve(require('@jitl/quickjs-wasmfile-release-sync/ffi').QuickJSFFI),
  importModuleLoader: () => Promise.resolve(require('@jitl/quickjs-wasmfile-release-sync/emscripten-module')),
};

let modulePromise;
const quickJs = () => (modulePromise = modulePromise || newQuickJSWASMModuleFromVariant(variant));

async function run(request) {
  if (request.kind === 'module-check') return checkModule(request);
  if (request.kind === 'module-run') return runModule(request);
  return runScript(request);
}

/** A fresh runtime and context bounded by the limits; `interrupted()` tells whether the deadline hit. */
async function newSandbox(limits) {
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
  return {
    runtime,
    vm,
    interrupted: () => interrupted,
    dispose() {
      vm.dispose();
      runtime.dispose();
    },
  };
}

async function runScript({ script, context, limits }) {
  const box = await newSandbox(limits);
  const { vm } = box;
  try {
    const contextJson = JSON.stringify(context === undefined ? null : context);
    // The script is the body of a function (the reference wraps it the same way), `$` is a global copy
    // of the context, and the value leaves the sandbox as JSON text.
    const source =
      `var $ = JSON.parse(${JSON.stringify(contextJson === undefined ? 'null' : contextJson)});\n` +
      `(function () { var r = (function f() {\n${script}\n})();\n` +
      `var s = r === undefined ? undefined : JSON.stringify(r); return s === undefined ? 'null' : s; })()`;
    const result = vm.evalCode(source, 'script.js');
    if (result.error) {
      const dumped = vm.dump(result.error);
      result.error.dispose();
      return classify(dumped, box.interrupted(), limits);
    }
    const json = vm.dump(result.value);
    result.value.dispose();
    return { ok: true, json: typeof json === 'string' ? json : 'null' };
  } finally {
    box.dispose();
  }
}

/** `(line L, column C)` of a QuickJS error whose stack names the module file, or ''. */
function position(dumped, filename) {
  const stack = dumped && typeof dumped.stack === 'string' ? dumped.stack : '';
  const escaped = filename.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const m = new RegExp(`${escaped}:(\\d+):(\\d+)`).exec(stack);
  return m ? ` (line ${m[1]}, column ${m[2]})` : '';
}

/** Compiles a code source as an ES module without running it: syntax errors and unresolvable imports. */
async function checkModule({ source, filename, limits }) {
  const box = await newSandbox(limits);
  const { vm } = box;
  try {
    const result = vm.evalCode(source, filename, { type: 'module', compileOnly: true });
    if (result.error) {
      const dumped = vm.dump(result.error);
      result.error.dispose();
      // Compiling runs nothing, so nothing can throw `undefined`: an "exception" that dumps as
      // undefined is quickjs-emscripten misreading the compiled module value (it happens to some
      // well-formed modules, e.g. `export class A { run() { return 1; } }`). Syntax errors, refused
      // imports and limits always come as error objects (or null for out of memory).
      if (dumped === undefined && !box.interrupted()) return { ok: true, json: 'null' };
      const failed = classify(dumped, box.interrupted(), limits);
      return failed.reason === 'error'
        ? { ...failed, message: failed.message + position(dumped, filename) }
        : failed;
    }
    result.value.dispose();
    return { ok: true, json: 'null' };
  } finally {
    box.dispose();
  }
}

/**
 * Settles a value that may be a promise by running the runtime's pending jobs (there is no I/O in
 * the sandbox, so a promise that is still pending afterwards never settles). Returns
 * { value } or { error } handles; the input handle is consumed.
 */
function settle(box, handle) {
  const { vm, runtime } = box;
  for (;;) {
    const state = vm.getPromiseState(handle);
    if (state.type === 'fulfilled') {
      if (state.notAPromise) return { value: handle };
      handle.dispose();
      return { value: state.value };
    }
    if (state.type === 'rejected') {
      handle.dispose();
      return { error: state.error };
    }
    const jobs = runtime.executePendingJobs();
    if (jobs.error) {
      handle.dispose();
      return { error: jobs.error };
    }
    if (jobs.value === 0) {
      handle.dispose();
      return { pending: true };
    }
  }
}

/**
 * Loads the code source as an ES module, takes its export `className`, constructs it with the action
 * input, awaits `run(context)` and returns the value as JSON text.
 */
async function runModule({ source, filename, className, input, context, limits }) {
  const box = await newSandbox(limits);
  const { vm } = box;
  const fail = (handle) => {
    const dumped = vm.dump(handle);
    handle.dispose();
    return classify(dumped, box.interrupted(), limits);
  };
  try {
    const loaded = vm.evalCode(source, filename, { type: 'module' });
    if (loaded.error) return fail(loaded.error);
    const ns = settle(box, loaded.value);
    if (ns.error) return fail(ns.error);
    if (ns.pending)
      return { ok: false, reason: 'error', message: `Error: the module ${filename} never finished loading` };
    const cls = vm.getProp(ns.value, className);
    ns.value.dispose();
    if (vm.typeof(cls) !== 'function') {
      cls.dispose();
      return {
        ok: false,
        reason: 'error',
        message: `TypeError: the code source exports no class named ${className}`,
      };
    }
    vm.setProp(vm.global, '__dynamicActionClass', cls);
    cls.dispose();
    const args = JSON.stringify(
      JSON.stringify({
        input: input === undefined ? null : input,
        context: context === undefined ? null : context,
      }),
    );
    const started = vm.evalCode(
      `(async () => { const a = JSON.parse(${args}); const Action = globalThis.__dynamicActionClass;\n` +
        `delete globalThis.__dynamicActionClass;\n` +
        `const action = new Action(a.input);\n` +
        `if (!action || typeof action.run !== 'function') throw new TypeError(${JSON.stringify(`class ${className} has no run(context) method`)});\n` +
        `const r = await action.run(a.context);\n` +
        `const s = r === undefined ? undefined : JSON.stringify(r); return s === undefined ? 'null' : s; })()`,
      'dynamic-action-call.js',
    );
    if (started.error) return fail(started.error);
    const outcome = settle(box, started.value);
    if (outcome.error) return fail(outcome.error);
    if (outcome.pending)
      return { ok: false, reason: 'error', message: 'Error: run() returned a promise that never settles' };
    const json = vm.typeof(outcome.value) === 'string' ? vm.getString(outcome.value) : 'null';
    outcome.value.dispose();
    return { ok: true, json };
  } finally {
    box.dispose();
  }
}

function classify(dumped, interrupted, limits) {
  const d = dumped && typeof dumped === 'object' ? dumped : {};
  const name = typeof d.name === 'string' ? d.name : 'Error';
  const message =
    typeof d.message === 'string' ? d.message : typeof dumped === 'string' ? dumped : JSON.stringify(dumped);
  if (interrupted) {
    return {
      ok: false,
      reason: 'time-limit',
      message: `the script exceeded its time limit of ${limits.timeLimitMs} ms`,
    };
  }
  if (dumped === null || /out of memory/i.test(message)) {
    return {
      ok: false,
      reason: 'memory-limit',
      message: `the script exceeded its memory limit of ${limits.memoryLimitBytes} bytes`,
    };
  }
  return { ok: false, reason: 'error', message: `${name}: ${message}` };
}

parentPort.on('message', (request) => {
  run(request).then(
    (reply) => parentPort.postMessage({ id: request.id, ...reply }),
    (e) => {
      // A trap inside the WASM module leaves it unusable: report, and let the owner replace this worker.
      parentPort.postMessage({
        id: request.id,
        ok: false,
        reason: 'crash',
        message: e && e.message ? e.message : String(e),
      });
    },
  );
});
