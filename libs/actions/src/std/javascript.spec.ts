import { ctxFor } from '../../test/action-context';
import { ActionAbortedError } from '../action';
import { StandardActionRunner } from '../action-runner';
import { evaluateJavaScript, JavaScriptError, JavaScriptSandbox } from './javascript-sandbox';

const limits = { timeLimitMs: 500, memoryLimitBytes: 16 * 1024 * 1024, maxStackBytes: 256 * 1024 };

// Generous per-test bound: CI shares 2 cores with other suites; the assertions carry the real bounds.
jest.setTimeout(30_000);

describe('std.javascript in the QuickJS sandbox', () => {
  const runner = new StandardActionRunner({ javascript: limits });
  const ctx = ctxFor();

  it('runs the script as a function body with $ = context and returns JSON values', async () => {
    await expect(
      runner.run(
        'std.javascript',
        { script: 'return $.items.map(function (x) { return x * 2; });', context: { items: [1, 2, 3] } },
        ctx,
      ),
    ).resolves.toEqual({ kind: 'success', result: [2, 4, 6] });
    await expect(
      runner.run('std.js', { script: 'return {a: $.a + 1, b: [true, null, "s"]};', context: { a: 1 } }, ctx),
    ).resolves.toEqual({
      kind: 'success',
      result: { a: 2, b: [true, null, 's'] },
    });
    await expect(runner.run('std.js', { script: 'var x = 1;' }, ctx)).resolves.toEqual({
      kind: 'success',
      result: null,
    });
    await expect(runner.run('std.js', { script: 'return new Date(0);' }, ctx)).resolves.toEqual({
      kind: 'success',
      result: '1970-01-01T00:00:00.000Z',
    });
  });

  it('context is a copy: the script cannot change the caller data', async () => {
    const context = { n: 1 };
    await runner.run('std.js', { script: '$.n = 99; return $.n;', context }, ctx);
    expect(context.n).toBe(1);
  });

  it('sees nothing of the host: no process, require, module or host globals', async () => {
    const probe = `return [typeof process, typeof require, typeof module, typeof setTimeout, typeof fetch,
      typeof std, typeof os, typeof WebAssembly, typeof globalThis.process, Object.keys(globalThis).filter(function (k) { return k !== '$'; }).length];`;
    const outcome = await runner.run('std.js', { script: probe }, ctx);
    expect(outcome).toEqual({
      kind: 'success',
      result: [
        'undefined',
        'undefined',
        'undefined',
        'undefined',
        'undefined',
        'undefined',
        'undefined',
        'undefined',
        'undefined',
        0,
      ],
    });
    (globalThis as Record<string, unknown>)['hostSecret'] = 's3cret';
    try {
      await expect(runner.run('std.js', { script: 'return typeof hostSecret;' }, ctx)).resolves.toEqual({
        kind: 'success',
        result: 'undefined',
      });
      const escape = await runner.run(
        'std.js',
        { script: "return (function(){}).constructor('return typeof process')();" },
        ctx,
      );
      expect(escape).toEqual({ kind: 'success', result: 'undefined' });
    } finally {
      delete (globalThis as Record<string, unknown>)['hostSecret'];
    }
  });

  it('stops an infinite loop at the time limit', async () => {
    const started = Date.now();
    const outcome = await runner.run('std.js', { script: 'while (true) {}' }, ctx);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(outcome).toEqual({
      kind: 'error',
      error: expect.stringContaining(
        "msg='JavaScriptAction failed: the script exceeded its time limit of 500 ms'",
      ),
    });
  });

  it('stops a memory bomb at the memory limit, and the sandbox still works afterwards', async () => {
    const bomb =
      'var a = []; while (true) { a.push({ n: a.length, s: "item " + a.length, l: [a.length] }); }';
    // A generous time limit, so only the memory limit can stop it (2 shared cores, parallel suites).
    const roomy = new StandardActionRunner({
      javascript: { ...limits, timeLimitMs: 20_000, memoryLimitBytes: 8 * 1024 * 1024 },
    });
    const started = Date.now();
    const outcome = await roomy.run('std.js', { script: bomb }, ctx);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(outcome).toEqual({
      kind: 'error',
      error: expect.stringContaining(
        'JavaScriptAction failed: the script exceeded its memory limit of 8388608 bytes',
      ),
    });
    await expect(runner.run('std.js', { script: 'return 1 + 1;' }, ctx)).resolves.toEqual({
      kind: 'success',
      result: 2,
    });
  });

  it('a thrown error and a syntax error fail the action with their message', async () => {
    await expect(runner.run('std.js', { script: 'throw new TypeError("bad thing");' }, ctx)).resolves.toEqual(
      {
        kind: 'error',
        error: expect.stringContaining("msg='JavaScriptAction failed: TypeError: bad thing'"),
      },
    );
    const syntax = await runner.run('std.js', { script: 'return (;' }, ctx);
    expect(syntax).toEqual({
      kind: 'error',
      error: expect.stringContaining('JavaScriptAction failed: SyntaxError'),
    });
  });

  it('deep recursion hits the stack limit instead of crashing', async () => {
    await expect(
      evaluateJavaScript('function r(n) { return r(n + 1) + 1; } return r(0);', null, limits),
    ).rejects.toBeInstanceOf(JavaScriptError);
  });

  it('never blocks the event loop, even while a script spins', async () => {
    let ticks = 0;
    const interval = setInterval(() => ticks++, 10);
    await runner.run('std.js', { script: 'while (true) {}' }, ctx);
    clearInterval(interval);
    expect(ticks).toBeGreaterThan(10);
  });

  it('a caller abort terminates the running script at once', async () => {
    const controller = new AbortController();
    const slow = new StandardActionRunner({ javascript: { ...limits, timeLimitMs: 30_000 } });
    const started = Date.now();
    const run = slow.run('std.js', { script: 'while (true) {}' }, ctxFor({ signal: controller.signal }));
    setTimeout(() => controller.abort(), 100);
    await expect(run).rejects.toBeInstanceOf(ActionAbortedError);
    expect(Date.now() - started).toBeLessThan(5_000);
    await expect(slow.run('std.js', { script: 'return "still works";' }, ctx)).resolves.toEqual({
      kind: 'success',
      result: 'still works',
    });
  });

  it('queues scripts beyond the worker count and runs them all; close() refuses further work', async () => {
    const sandbox = new JavaScriptSandbox({ maxWorkers: 1 });
    const results = await Promise.all(
      [1, 2, 3].map((n) =>
        sandbox.evaluate(
          'var t = 0; for (var i = 0; i < 100000; i++) t += i; return $.n * 10;',
          { n },
          limits,
        ),
      ),
    );
    expect(results).toEqual([10, 20, 30]);
    const pending = sandbox.evaluate('while (true) {}', null, { ...limits, timeLimitMs: 30_000 });
    const refused = expect(pending).rejects.toMatchObject({ reason: 'aborted' });
    await sandbox.close();
    await refused;
    await expect(sandbox.evaluate('return 1;', null, limits)).rejects.toBeInstanceOf(JavaScriptError);
  });
});
