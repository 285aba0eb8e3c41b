import { findInlineParams, parseCommand, parseTransitionTarget } from './inline-params';

describe('parseCommand (Mistral _parse_cmd_and_input)', () => {
  it.each<[string, string, Record<string, unknown>]>([
    ['std.noop', 'std.noop', {}],
    ['std.echo(output=1)', 'std.echo(output=1)', {}],
    ['std.echo output=1', 'std.echo', { output: 1 }],
    ['std.echo  output="a b"   n=2', 'std.echo', { output: 'a b', n: 2 }],
    ["std.echo output='it''s'", 'std.echo', { output: 'it' }],
    ['std.echo output="quote \' inside"', 'std.echo', { output: "quote ' inside" }],
    ['std.echo output=[1, 2] other=[3]', 'std.echo', { output: '[1, 2] other=[3]' }],
    ['std.echo output={"a": 1}', 'std.echo', {}],
    ['std.echo output=<% $.a %> x=<% $.b %>', 'std.echo', { output: '<% $.a %>', x: '<% $.b %>' }],
    ['std.echo output={{ _.a }}', 'std.echo', { output: '{{ _.a }}' }],
    ['std.echo x=trueish y=nullable z=12abc', 'std.echo', { x: true, y: null, z: 12 }],
    ['std.echo x=-1', 'std.echo', {}],
    ['std.echo ключ="значение"', 'std.echo', { ключ: 'значение' }],
    ['wb.my_action a=1', 'wb.my_action', { a: 1 }],
    ['<% $.action %> a=1', '<% $.action %>', { a: 1 }],
    ['{{ _.action }} a=1', '{{ _.action }}', { a: 1 }],
    ['name(arg=1) x=2', 'name', { arg: 1, x: 2 }],
  ])('%s', (text, name, params) => {
    expect(parseCommand(text)).toEqual({ ok: true, name, params });
  });

  it('fails when no command can be read', () => {
    expect(parseCommand('=x y')).toEqual({ ok: false, error: 'Invalid action/workflow task property: =x y' });
    expect(parseCommand('"quoted" x=1')).toMatchObject({ ok: false });
  });

  it('finds parameters anywhere in the text', () => {
    expect(findInlineParams('a=1 b="x" c')).toEqual({ a: 1, b: 'x' });
  });
});

describe('parseTransitionTarget', () => {
  it.each<[string, string, Record<string, unknown>]>([
    ['task1', 'task1', {}],
    ['fail msg="boom"', 'fail', { msg: 'boom' }],
    ['fail(msg="boom")', 'fail', { msg: 'boom' }],
    ['fail(msg="with space")', 'fail', { msg: 'with space' }],
    ['fail(msg=<% $.m %>)', 'fail', { msg: '<% $.m %>' }],
    ['succeed', 'succeed', {}],
  ])('%s', (text, name, params) => {
    expect(parseTransitionTarget(text)).toEqual({ ok: true, name, params });
  });
});
