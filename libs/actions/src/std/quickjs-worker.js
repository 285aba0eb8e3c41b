'use strict';
// Worker thread of std.javascript (see javascript-sandbox.ts). Plain CommonJS so that it runs in a
// bare worker without a TypeScript loader. One script at a time: { id, script, context, limits } in,
// { id, ok: true, json } or { id, ok: false, reason, message } out. Every script gets a fresh QuickJS
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

async function run({ script, context, limits }) {
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
      return classify(dumped, interrupted, limits);
    }
    const json = vm.dump(result.value);
    result.value.dispose();
    return { ok: true, json: typeof json === 'string' ? json : 'null' };
  } finally {
    vm.dispose();
    runtime.dispose();
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
