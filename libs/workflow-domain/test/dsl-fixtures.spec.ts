import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  parseWorkbook,
  parseWorkflows,
  renderInputString,
  resolvePublish,
  taskByName,
  workbookMemberDefinitions,
  workflowInterface,
  type WorkflowSpec,
} from '../src';

const fixture = (name: string): string =>
  readFileSync(join(__dirname, '../src/dsl/__fixtures__', name), 'utf8');
const one = (name: string): WorkflowSpec => parseWorkflows(fixture(name)).workflows[0]!;

describe('conformance examples of the spec (section 19) parse', () => {
  it('A: data flow and output', () => {
    const wf = one('example-a-data-flow.yaml');
    expect(wf.name).toBe('sum_up');
    expect(wf.input).toEqual([
      {
        name: 'items',
        required: false,
        default: [
          { n: 'a', v: 1 },
          { n: 'b', v: 5 },
        ],
      },
    ]);
    expect(wf.output).toEqual({ total: '<% $.total %>', names: '<% $.items.select($.n) %>' });
    expect(taskByName(wf, 'add')).toMatchObject({
      action: 'std.echo',
      input: { output: '<% $.items.select($.v).sum() %>' },
      publish: { total: '<% task().result %>' },
    });
    expect(renderInputString(wf.input)).toBe(`items="[{'n': 'a', 'v': 1}, {'n': 'b', 'v': 5}]"`);
  });

  it('B: error handling', () => {
    const wf = one('example-b-error-handling.yaml');
    const attempt = taskByName(wf, 'attempt')!;
    expect(attempt.transitions['on-error']).toEqual([{ target: 'cleanup', kind: 'task', params: {} }]);
    expect(resolvePublish(attempt, 'ERROR')).toEqual({ branch: { why: '<% task().state_info %>' } });
    expect(resolvePublish(attempt, 'SUCCESS')).toBeUndefined();
    expect(wf.startTasks).toEqual(['attempt']);
  });

  it('C: join', () => {
    const wf = one('example-c-join.yaml');
    expect(taskByName(wf, 'j')!.join).toBe('all');
    expect(wf.inboundTasks.j).toEqual(['left', 'right']);
    expect(wf.startTasks).toEqual(['left', 'right']);
  });

  it('D: with-items with concurrency', () => {
    const each = taskByName(one('example-d-with-items.yaml'), 'each')!;
    expect(each.withItems).toEqual([
      { variable: 'a', source: [1, 2] },
      { variable: 'b', source: "<% ['x', 'y'] %>" },
    ]);
    expect(each.policies.concurrency).toBe(1);
    expect(each.input).toEqual({ output: '<% $.a %>-<% $.b %>' });
  });

  it('E: engine commands with conditions and messages', () => {
    const wf = one('example-e-commands.yaml');
    expect(wf.input).toEqual([{ name: 'n', required: true }]);
    expect(taskByName(wf, 't')!.transitions['on-success']).toEqual([
      { target: 'fail', kind: 'command', condition: '<% $.n > 2 %>', params: { msg: 'too big <% $.n %>' } },
      { target: 'succeed', kind: 'command', params: {} },
    ]);
  });
});

describe('standard examples', () => {
  it('a full direct workflow list', () => {
    const { workflows, definitions } = parseWorkflows(fixture('direct-full.yaml'));
    expect(workflows.map((w) => w.name)).toEqual(['create_vm', 'wait_until_active']);
    const wf = workflows[0]!;
    expect(wf.tags).toEqual(['infra', 'vm']);
    expect(renderInputString(wf.input)).toBe(
      'vm_name, image_ref, flavor_ref="m1.small", retries="3", extra="None"',
    );
    expect(workflowInterface(wf)).toEqual({
      input: ['vm_name', 'image_ref', { flavor_ref: 'm1.small' }, { retries: 3 }, { extra: null }],
      output: ['vm_id', 'status'],
    });
    const create = taskByName(wf, 'create_server')!;
    expect(create).toMatchObject({
      action: 'std.http',
      input: { headers: { 'X-Name': '<% $.vm_name %>' }, url: 'http://nova/servers', body: '{"name": "x"}' },
      keepResult: false,
      safeRerun: true,
      target: '<% $.region %>',
    });
    expect(create.policies).toEqual({
      retry: { count: 5, delay: '<% $.retries %>', breakOn: '<% $.vm_id != null %>' },
      waitBefore: 1,
      waitAfter: 2,
      timeout: 60,
      pauseBefore: false,
      failOn: '<% task().result.status >= 500 %>',
    });
    expect(create.transitions['on-error']).toEqual([{ target: 'notify_failure', kind: 'task', params: {} }]);
    expect(resolvePublish(create, 'SUCCESS')).toEqual({
      branch: { vm_id: '<% task().result.content.id %>' },
      global: { finished: true },
    });
    expect(taskByName(wf, 'wait_for_instance')).toMatchObject({
      type: 'WORKFLOW',
      workflow: 'wait_until_active',
      input: { vm_id: '<% $.vm_id %>', timeout: 600 },
      policies: { timeout: 60, retry: { count: 2, delay: 1 } },
    });
    expect(taskByName(wf, 'notify_failure')!.transitions['on-error']).toEqual([]);
    expect(wf.startTasks).toEqual(['create_server']);
    expect(definitions.create_vm).toContain("version: '2.0'\ncreate_vm:\n");
    expect(parseWorkflows(definitions.create_vm!).workflows[0]).toEqual(wf);
    expect(parseWorkflows(definitions.wait_until_active!).workflows[0]).toEqual(workflows[1]);
  });

  it('a reverse workflow', () => {
    const wf = one('reverse.yaml');
    expect(wf.type).toBe('reverse');
    expect(wf.tasks.map((t) => [t.name, t.requires])).toEqual([
      ['prepare', []],
      ['fetch', ['prepare']],
      ['build', ['fetch', 'prepare']],
      ['install', ['build', 'fetch', 'prepare']],
    ]);
    expect(taskByName(wf, 'install')!.policies.timeout).toBe(120);
    expect(taskByName(wf, 'build')!.policies.timeout).toBe(30);
    // `username=root` is an unquoted word: the reference ignores such inline values silently.
    expect(taskByName(wf, 'install')!.input).toEqual({ cmd: 'make install', host: '<% $.host %>' });
  });

  it('a workbook with actions', () => {
    const text = fixture('workbook.yaml');
    const wb = parseWorkbook(text);
    expect(wb).toMatchObject({
      name: 'my_wb',
      description: 'A workbook with actions and workflows',
      tags: ['demo'],
    });
    expect(wb.workflows.map((w) => w.name)).toEqual(['my_wb.hello', 'my_wb.sub']);
    expect(wb.actions.map((a) => a.name)).toEqual(['my_wb.greet', 'my_wb.local_http']);
    expect(wb.actions[0]).toEqual({
      name: 'my_wb.greet',
      description: 'Says hello',
      tags: [],
      base: 'std.echo',
      baseInput: { output: 'Hello, <% $.name %>!' },
      input: [
        { name: 'name', required: true },
        { name: 'punctuation', required: false, default: '!' },
      ],
      hasOutput: true,
      output: '<% $ %>',
    });
    const defs = workbookMemberDefinitions(text, wb);
    expect(defs.actions['my_wb.local_http']).toBe(
      'local_http:\n  base: std.http\n  base-input:\n    url: http://localhost:8080/<% $.path %>\n    method: GET\n  input: [path]\n',
    );
    expect(defs.workflows['my_wb.sub']).toBe(
      'sub:\n  type: reverse\n  tasks:\n    only:\n      action: local_http path=status\n',
    );
    expect(defs.workflows['my_wb.hello']).toMatch(/^hello:\n {2}input:\n/);
  });
});
