import { InvalidInputError, NotFoundError } from '@osc/errors';
import { parseActions } from '@osc/workflow-domain';
import { ctxFor } from '../test/action-context';
import { planAdHocCall, runAdHocAction, transformAdHocOutcome } from './ad-hoc';
import { StandardActionRunner } from './action-runner';

const DEFS = parseActions(`
version: '2.0'
greet:
  base: std.echo
  base-input:
    output: "Hello, <% $.name %> from <% $.city %>!"
  input:
    - name
    - city: Paris
  output:
    text: <% $ %>
shout:
  base: greet name=<% $.who %>
  input:
    - who
  output: <% $.text.toUpper() %>
raw:
  base: std.echo
  base-input:
    output: <% $.v %>
  input: [v]
loop_a:
  base: loop_b
loop_b:
  base: loop_a
dangling:
  base: not_there
failing:
  base: std.fail
  base-input:
    error_data: <% $.why %>
  input: [why]
  output: never applied
`);
const byName = new Map(DEFS.map((d) => [d.name, d]));
const def = (name: string) => byName.get(name)!;
const deps = { resolve: (name: string) => byName.get(name), namespace: '' };

describe('ad-hoc actions', () => {
  const runner = new StandardActionRunner();

  it('fills input defaults and evaluates base-input over the input layered on the task data', async () => {
    const call = await planAdHocCall(def('greet'), { name: 'Ann' }, { city: 'Rome', other: 1 }, deps);
    expect(call.baseName).toBe('std.echo');
    expect(call.baseInput).toEqual({ output: 'Hello, Ann from Paris!' });
    const fromTask = await planAdHocCall(def('raw'), { v: [1, 2] }, {}, deps);
    expect(fromTask.baseInput).toEqual({ output: [1, 2] });
  });

  it('answers now() and uuid() in base-input without an execution, as Mistral does; execution() is refused', async () => {
    const stamp = parseActions(`
version: '2.0'
stamp:
  base: std.echo
  base-input:
    output: <% [now().year, uuid().len()] %>
ctx:
  base: std.echo
  base-input:
    output: <% execution().id %>
`);
    const own = { resolve: (n: string) => stamp.find((d) => d.name === n), namespace: '' };
    const planned = await planAdHocCall(stamp[0]!, {}, {}, own);
    expect(planned.baseInput).toEqual({ output: [new Date().getUTCFullYear(), 36] });
    await expect(planAdHocCall(stamp[1]!, {}, {}, own)).rejects.toThrow('execution() is not available');
  });

  it('runs the base action and applies the outputs deepest first', async () => {
    await expect(runAdHocAction(def('greet'), { name: 'Ann' }, ctxFor(), runner, deps)).resolves.toEqual({
      kind: 'success',
      result: { text: 'Hello, Ann from Paris!' },
    });
    await expect(runAdHocAction(def('shout'), { who: 'bob' }, ctxFor(), runner, deps)).resolves.toEqual({
      kind: 'success',
      result: 'HELLO, BOB FROM PARIS!',
    });
  });

  it('an error result keeps its value; output is not applied', async () => {
    await expect(runAdHocAction(def('failing'), { why: 'broken' }, ctxFor(), runner, deps)).resolves.toEqual({
      kind: 'error',
      error: 'broken',
    });
    expect(transformAdHocOutcome([def('greet')], { kind: 'async' })).toEqual({ kind: 'async' });
  });

  it('checks the ad-hoc input with the reference text', async () => {
    const err = await planAdHocCall(def('greet'), { city: 'x', extra: 1 }, {}, deps).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as Error).message).toBe(
      "Invalid input [name=greet, class=mistral.actions.adhoc.AdHocAction, missing=['name'], unexpected=['extra']]",
    );
  });

  it('a cycle and a missing base are errors', async () => {
    await expect(planAdHocCall(def('loop_a'), {}, {}, deps)).rejects.toThrow(
      'Found a cycle in an ad-hoc action chain [action_name=loop_a, duplicate_action_name=loop_a]',
    );
    const missing = await planAdHocCall(def('dangling'), {}, {}, deps).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect((missing as Error).message).toBe('Failed to find base action [action_name=not_there namespace=]');
  });
});
