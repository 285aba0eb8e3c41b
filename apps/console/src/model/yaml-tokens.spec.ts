import { yamlLineTokens, yamlTokens } from './yaml-tokens';

const kinds = (line: string) => yamlLineTokens(line).map((t) => `${t.kind}:${t.text}`);

describe('yamlLineTokens', () => {
  it.each([
    ["version: '2.0'", ['key:version', 'plain::', 'plain: ', "string:'2.0'"]],
    ['  # a comment', ['plain:  ', 'comment:# a comment']],
    [
      '    - task_b: <% $.x > 1 %>',
      ['plain:    ', 'dash:-', 'plain: ', 'key:task_b', 'plain::', 'plain: ', 'expression:<% $.x > 1 %>'],
    ],
    [
      '    action: std.echo output="{{ _.y }}"',
      ['plain:    ', 'key:action', 'plain::', 'plain: std.echo output=', 'string:"{{ _.y }}"'],
    ],
    ['    count: 3', ['plain:    ', 'key:count', 'plain::', 'plain: ', 'number:3']],
    [
      '    concurrency: true # on',
      ['plain:    ', 'key:concurrency', 'plain::', 'plain: ', 'literal:true', 'plain: ', 'comment:# on'],
    ],
    ['      - a1', ['plain:      ', 'dash:-', 'plain: ', 'plain:a1']],
    ['url: http://x:80/a#b', ['key:url', 'plain::', 'plain: http://x:80/a#b']],
  ])('%s', (line, expected) => {
    expect(kinds(line)).toEqual(expected);
  });

  it('gives back every line unchanged', () => {
    const text =
      "version: '2.0'\nwf:\n  tasks:\n    a:\n      action: std.noop # x\n      on-success: [b, c]\n\n    b: {action: std.echo output=<% 1 %>}\n";
    expect(
      yamlTokens(text)
        .map((line) => line.map((t) => t.text).join(''))
        .join('\n'),
    ).toBe(text);
  });
});
