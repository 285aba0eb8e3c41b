import { InvalidInputError } from '@osc/errors';
import { ctxFor } from '../test/action-context';
import { ActionAbortedError } from './action';
import { StandardActionRunner } from './action-runner';
import { DYNAMIC_ACTION_CLASS, checkCodeSource } from './dynamic-action';

const limits = { timeLimitMs: 500, memoryLimitBytes: 16 * 1024 * 1024, maxStackBytes: 256 * 1024 };

// Generous per-test bound: CI shares 2 cores with other suites; the assertions carry the real bounds.
jest.setTimeout(30_000);

const MODULE = `
const factor = 2;
export class Doubler {
  constructor(input) { this.input = input; }
  run(context) { return { doubled: this.input.x * factor, task: context.execution.task_name, project: context.security.project_id }; }
}
export class Later {
  constructor(input) { this.input = input; }
  async run() { const v = await Promise.resolve(this.input.v); return [v, v]; }
}
export class Fails { run() { throw new Error('boom'); } }
export class NoRun {}
export class Spins { run() { for (;;) {} } }
export class Hog { run() { const a = []; for (;;) a.push({ n: a.length, s: 'item ' + a.length, l: [a.length] }); } }
export class Never { run() { return new Promise(() => {}); } }
export class Nothing { run() {} }
export const notAClass = 1;
export function Plain(input) { this.input = input; }
Plain.prototype.run = function () { return 'plain ' + this.input.s; };
`;

const def = (className: string, content = MODULE) => ({
  name: 'my_action',
  className,
  codeSource: { name: 'mymod', content },
});

describe('dynamic actions in the QuickJS sandbox', () => {
  const runner = new StandardActionRunner({ javascript: limits });
  const ctx = ctxFor();
  const errorOf = (msg: string) => ({
    kind: 'error',
    error: expect.stringMatching(
      new RegExp(
        `^The action raised an exception \\[action=<${DYNAMIC_ACTION_CLASS.replace(/\./g, '\\.')} object at 0x7f[0-9a-f]{10}>, action_ex_id=${ctx.actionExecutionId}, msg='${msg}'\\]$`,
      ),
    ) as unknown,
  });

  it('constructs the exported class with the input and returns what run(context) returns', async () => {
    await expect(runner.runDynamic(def('Doubler'), { x: 21 }, ctx)).resolves.toEqual({
      kind: 'success',
      result: { doubled: 42, task: ctx.taskName, project: ctx.projectId },
    });
    await expect(runner.runDynamic(def('Plain'), { s: 'fn' }, ctx)).resolves.toEqual({
      kind: 'success',
      result: 'plain fn',
    });
    await expect(runner.runDynamic(def('Nothing'), {}, ctx)).resolves.toEqual({
      kind: 'success',
      result: null,
    });
  });

  it('awaits a promise returned by run', async () => {
    await expect(runner.runDynamic(def('Later'), { v: 'a' }, ctx)).resolves.toEqual({
      kind: 'success',
      result: ['a', 'a'],
    });
  });

  it('turns throws, missing classes and missing run methods into ERROR results', async () => {
    await expect(runner.runDynamic(def('Fails'), {}, ctx)).resolves.toEqual(errorOf('Error: boom'));
    await expect(runner.runDynamic(def('Missing'), {}, ctx)).resolves.toEqual(
      errorOf('TypeError: the code source exports no class named Missing'),
    );
    await expect(runner.runDynamic(def('notAClass'), {}, ctx)).resolves.toEqual(
      errorOf('TypeError: the code source exports no class named notAClass'),
    );
    await expect(runner.runDynamic(def('NoRun'), {}, ctx)).resolves.toEqual(
      errorOf('TypeError: class NoRun has no run\\(context\\) method'),
    );
    await expect(runner.runDynamic(def('Never'), {}, ctx)).resolves.toEqual(
      errorOf('Error: run\\(\\) returned a promise that never settles'),
    );
    await expect(
      runner.runDynamic(
        def('X', 'export class X { run() { return 1 } }\nthrow new RangeError("at load");'),
        {},
        ctx,
      ),
    ).resolves.toEqual(errorOf('RangeError: at load'));
  });

  it('bounds time and memory as std.javascript does', async () => {
    await expect(runner.runDynamic(def('Spins'), {}, ctx)).resolves.toEqual(
      errorOf('the script exceeded its time limit of 500 ms'),
    );
    // A generous time limit, so only the memory limit can stop it (2 shared cores, parallel suites).
    const roomy = new StandardActionRunner({
      javascript: { ...limits, timeLimitMs: 20_000, memoryLimitBytes: 8 * 1024 * 1024 },
    });
    await expect(roomy.runDynamic(def('Hog'), {}, ctx)).resolves.toEqual(
      errorOf('the script exceeded its memory limit of 8388608 bytes'),
    );
  });

  it('a task timeout shorter than the sandbox limit wins', async () => {
    const outcome = await runner.runDynamic(def('Spins'), {}, { ...ctx, timeoutMs: 200 });
    expect(outcome.kind).toBe('error');
  });

  it('an aborted caller gets no outcome', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      runner.runDynamic(def('Doubler'), { x: 1 }, { ...ctx, signal: controller.signal }),
    ).rejects.toBeInstanceOf(ActionAbortedError);
  });

  it('sees nothing of the host and cannot import modules', async () => {
    const probe =
      'export class P { run() { return [typeof process, typeof require, typeof setTimeout, typeof fetch]; } }';
    await expect(runner.runDynamic(def('P', probe), {}, ctx)).resolves.toEqual({
      kind: 'success',
      result: ['undefined', 'undefined', 'undefined', 'undefined'],
    });
  });
});

describe('checkCodeSource', () => {
  it('accepts a module and runs none of it', async () => {
    await expect(
      checkCodeSource('ok', 'export class A { run() { return 1; } }\nfor (;;) {}', limits),
    ).resolves.toBeUndefined();
  });

  it.each([
    'export class A { run() { return 1; } }\n',
    "export class Iso { run() { return 'a-secret'; } }\n",
    'const a = 1; export class A { run() {} }',
  ])('accepts a well-formed module with a class (%j)', async (source) => {
    await expect(checkCodeSource('ok', source, limits)).resolves.toBeUndefined();
  });

  it('names the line and column of a syntax error', async () => {
    const err = await checkCodeSource(
      'bad',
      'export class A {\n  run(c) {\n    return 1 +;\n  }\n}',
      limits,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as Error).message).toBe(
      "Invalid code source bad: SyntaxError: unexpected token in expression: ';' (line 3, column 15)",
    );
  });

  it('refuses imports', async () => {
    await expect(checkCodeSource('imp', 'import fs from "fs";\nexport class A {}', limits)).rejects.toThrow(
      "Invalid code source imp: ReferenceError: could not load module 'fs'",
    );
  });
});
