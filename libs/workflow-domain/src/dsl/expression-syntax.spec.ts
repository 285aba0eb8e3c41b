import { checkBalancedDelimiters, isExpression, validateExpressionText } from './expression-syntax';

describe('isExpression (the whole value is one expression)', () => {
  it.each<[unknown, boolean]>([
    ['<% $.x %>', true],
    ['<% $.x %>  ', true],
    ['<% a %> and <% b %>', true],
    ['{{ _.x }}', true],
    ['x <% $.x %>', false],
    ['{% if x %}y{% endif %}', false],
    ['plain', false],
    [5, false],
    [null, false],
  ])('%j', (value, expected) => {
    expect(isExpression(value)).toBe(expected);
  });
});

describe('checkBalancedDelimiters', () => {
  it.each<[string, number]>([
    ['<% $.a.b[0] %>', 0],
    ['<% f($.a, [1, {k => 2}]) %> and <% "(" %>', 0],
    ["<% 'it''s' %>", 0],
    ['{{ _.a | join(",") }}', 0],
    ['{% for x in _.l %}{{ x }}{% endfor %}', 0],
    ['no expression at all (', 0],
    ['<% $.a(', 1],
    ['<% $.a( %>', 1],
    ['<% $.a) %>', 1],
    ['<% "open %>', 1],
    ['<% %>', 1],
    ['{{ }}', 1],
    ['{{ _.a', 1],
    ['{% if x ', 1],
    ['<% [1 %> <% (2 %>', 2],
  ])('%j has %d problems', (text, count) => {
    expect(checkBalancedDelimiters(text)).toHaveLength(count);
  });
});

describe('validateExpressionText', () => {
  it('rejects mixed languages in one string', () => {
    expect(validateExpressionText('<% 1 %> {{ 2 }}')[0]).toMatch(/already contains an expression/);
    expect(checkBalancedDelimiters('<% 1 %> {{ 2 }}')[0]).toMatch(/Mixing expression types/);
  });

  it('ignores non-strings and plain strings without calling the validator', () => {
    const calls: string[] = [];
    const v = (t: string): string[] => {
      calls.push(t);
      return [];
    };
    expect(validateExpressionText(5, v)).toEqual([]);
    expect(validateExpressionText('plain text', v)).toEqual([]);
    expect(calls).toEqual([]);
    expect(validateExpressionText('<% 1 %>', v)).toEqual([]);
    expect(calls).toEqual(['<% 1 %>']);
  });
});

describe('a failing validator', () => {
  it('becomes an issue instead of an exception', () => {
    const boom = (): string[] => {
      throw new Error('boom');
    };
    expect(validateExpressionText('<% 1 %>', boom)).toEqual([
      'Expression could not be validated [expression=<% 1 %>, error=boom]',
    ]);
  });
});
