import { parseWorkflows } from './documents';
import { type WorkflowSpec } from './model';
import {
  invalidInputMessage,
  resolvePublish,
  resolveWorkflowInput,
  reverseTaskClosure,
  taskByName,
} from './spec-queries';

const first = (text: string): WorkflowSpec => parseWorkflows(text).workflows[0]!;

describe('resolvePublish (DSL-14.6)', () => {
  const wf = first(`version: '2.0'
wf:
  tasks:
    t:
      publish: {a: plain, b: plain, c: plain}
      publish-on-error: {e: plain}
      on-success:
        publish:
          branch: {a: success}
          global: {g: success}
      on-complete:
        publish:
          branch: {a: complete, b: complete}
          global: {g: complete, h: complete}
          atomic: {x: 1}
`);
  const t = taskByName(wf, 't')!;

  // Observed on the real Mistral 15 (reference server): on-complete › plain key › state clause.
  it('merges with precedence on-complete > plain key > state clause', () => {
    expect(resolvePublish(t, 'SUCCESS')).toEqual({
      branch: { a: 'complete', b: 'complete', c: 'plain' },
      global: { g: 'complete', h: 'complete' },
      atomic: { x: 1 },
    });
  });

  it('uses publish-on-error and on-complete for ERROR', () => {
    expect(resolvePublish(t, 'ERROR')).toEqual({
      branch: { e: 'plain', a: 'complete', b: 'complete' },
      global: { g: 'complete', h: 'complete' },
      atomic: { x: 1 },
    });
  });
});

describe('resolveWorkflowInput (DSL-2.3)', () => {
  const wf = first(
    "version: '2.0'\nwf:\n  input: [a, {b: 2}, {c: null}]\n  tasks:\n    t: {action: std.noop}\n",
  );

  it('fills defaults', () => {
    expect(resolveWorkflowInput(wf, { a: 1 })).toEqual({ ok: true, input: { a: 1, b: 2, c: null } });
    expect(resolveWorkflowInput(wf, { a: 1, b: 'x' })).toEqual({
      ok: true,
      input: { a: 1, b: 'x', c: null },
    });
  });

  it('reports missing and unexpected names like Mistral', () => {
    expect(resolveWorkflowInput(wf, { z: 1 })).toEqual({
      ok: false,
      error: "Invalid input [name=wf, class=DirectWorkflowSpec, missing=['a'], unexpected=['z']]",
    });
    expect(invalidInputMessage('std.echo', 'EchoAction', ['output'], [])).toBe(
      "Invalid input [name=std.echo, class=EchoAction, missing=['output']]",
    );
  });
});

describe('reverseTaskClosure (DSL-5.2)', () => {
  const wf = first(`version: '2.0'
wf:
  type: reverse
  tasks:
    a: {action: std.noop}
    b: {requires: a}
    c: {requires: [b]}
    d: {requires: a}
`);
  it('returns the target and its prerequisites in written order', () => {
    expect(reverseTaskClosure(wf, 'c')).toEqual(['a', 'b', 'c']);
    expect(reverseTaskClosure(wf, 'd')).toEqual(['a', 'd']);
    expect(reverseTaskClosure(wf, 'zzz')).toBeUndefined();
  });
});
