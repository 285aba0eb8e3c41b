import fc from 'fast-check';
import {
  containsExpression,
  evaluate,
  evaluateJinja,
  evaluateYaql,
  ExpressionError,
  prepareContext,
  prepareLayeredContext,
  validateExpressions,
} from './index';

const data = {
  n: 3,
  items: [
    { n: 'a', v: 1 },
    { n: 'b', v: 5 },
  ],
  name: 'wf',
  f: 2.5,
  nested: { k: [1, 2] },
};

describe('evaluate (whole structures, DSL-8.2..8.5)', () => {
  it('returns the native value for a string that is exactly one expression', () => {
    expect(evaluate('<% $.n %>', data)).toBe(3);
    expect(evaluate('<%   $.items.select($.n)   %>', data)).toEqual(['a', 'b']);
    expect(evaluate('{{ _.nested }}', data)).toEqual({ k: [1, 2] });
    expect(evaluate('<% $.missing2 = null %>', { missing2: null })).toBe(true);
  });

  it('renders embedded expressions with Python str() rules', () => {
    expect(evaluate('n=<% $.n %> f=<% $.f %> x=<% 4.0 / 2 %>', data)).toBe('n=3 f=2.5 x=2.0');
    expect(evaluate('l=<% [1, "a", null, true] %>', data)).toBe("l=[1, 'a', None, True]");
    expect(evaluate("d=<% {k => 'v', n => true} %>", data)).toBe("d={'k': 'v', 'n': True}");
    expect(evaluate('{{ _.name }}-{{ _.n }}', data)).toBe('wf-3');
    expect(evaluate("{% for i in _['items'] %}{{ i.n }}{% endfor %}", data)).toBe('ab');
    expect(() => evaluate('{% for i in _.items %}{{ i }}{% endfor %}', data)).toThrow(
      "'builtin_function_or_method' object is not iterable",
    );
  });

  it('walks dict values and list items but never keys', () => {
    const input = {
      '<% $.name %>': '<% $.n %>',
      list: ['<% $.n + 1 %>', 7, { deep: '{{ _.n * 2 }}' }],
      keep: true,
      none: null,
    };
    expect(evaluate(input, data)).toEqual({
      '<% $.name %>': 3,
      list: [4, 7, { deep: 6 }],
      keep: true,
      none: null,
    });
  });

  it('leaves non-expression values unchanged', () => {
    expect(evaluate('plain', data)).toBe('plain');
    expect(evaluate(42, data)).toBe(42);
    expect(evaluate(null, data)).toBeNull();
  });

  it('checks Jinja first when a string holds both kinds (DSL-8.1)', () => {
    expect(evaluate('{{ _.n }} <% $.n %>', data)).toBe('3 <% $.n %>');
  });

  it('matches the conformance examples of spec section 19', () => {
    const ctx = {
      items: [
        { n: 'a', v: 1 },
        { n: 'b', v: 5 },
      ],
      total: 6,
    };
    expect(evaluate({ total: '<% $.total %>', names: '<% $.items.select($.n) %>' }, ctx)).toEqual({
      total: 6,
      names: ['a', 'b'],
    });
    expect(evaluate('<% $.items.select($.v).sum() %>', ctx)).toBe(6);
    expect(evaluate('<% $.a %>-<% $.b %>', { a: 1, b: 'x' })).toBe('1-x');
    expect(evaluate('too big <% $.n %>', { n: 3 })).toBe('too big 3');
    expect(evaluate('<% $.n > 2 %>', { n: 1 })).toBe(false);
  });

  it('names the expression and the cause in typed errors, never the context', () => {
    const secret = { password: 'hunter2', d: {} };
    try {
      evaluate('x <% $.d.password %>', secret);
      throw new Error('should fail');
    } catch (e) {
      expect(e).toBeInstanceOf(ExpressionError);
      const err = e as ExpressionError;
      expect(err.kind).toBe('invalid');
      expect(err.message).toBe(
        "Can not evaluate YAQL expression [expression=$.d.password, error='password']",
      );
      expect(err.message).not.toContain('hunter2');
    }
    expect(() => evaluateJinja('_.missing', secret)).toThrow(
      "Can not evaluate Jinja expression [expression=_.missing, error='dict object' has no attribute 'missing']",
    );
  });

  it('never lets a raw JS error escape, whatever the input', () => {
    const alphabet = fc.constantFrom(
      ...'$._[](){}<>%=!+-*/,:|\'"` abc01→\n'.split(''),
      'where(',
      'select(',
      '=>',
      '->',
      ' and ',
      ' or ',
      ' not ',
      ' in ',
      '{{',
      '}}',
      '{%',
      '%}',
      '<%',
      '%>',
      '.len()',
      ' | ',
      ' is ',
    );
    fc.assert(
      fc.property(
        fc.array(alphabet, { maxLength: 25 }).map((a) => a.join('')),
        (text) => {
          for (const run of [
            () => evaluateYaql(text, data),
            () => evaluateJinja(text, data),
            () => evaluate(text, data),
          ]) {
            try {
              run();
            } catch (e) {
              if (!(e instanceof ExpressionError)) throw e;
            }
          }
        },
      ),
      { numRuns: 1500 },
    );
  });
});

describe('containsExpression / validateExpressions', () => {
  it('recognizes both kinds of expression', () => {
    expect(containsExpression('<% $.a %>')).toBe(true);
    expect(containsExpression('x {{ _.a }} y')).toBe(true);
    expect(containsExpression('{% if true %}x{% endif %}')).toBe(true);
    expect(containsExpression('<% multi\nline %>')).toBe(false);
    expect(containsExpression('plain')).toBe(false);
    expect(containsExpression(3)).toBe(false);
    expect(containsExpression({ a: '<% $ %>' })).toBe(false);
  });

  it('reports syntax errors per expression and accepts valid ones', () => {
    expect(validateExpressions('<% $.a.where($ > 1) %> and <% len($) %>')).toEqual([]);
    expect(validateExpressions('{{ _.a | join(",") }} {% if _.b %}x{% endif %}')).toEqual([]);
    expect(validateExpressions('plain text')).toEqual([]);
    const bad = validateExpressions('<% $.a + %> ok <% 1 %>');
    expect(bad).toHaveLength(1);
    expect(bad[0]).toMatch(/^Invalid YAQL expression \[expression=\$\.a \+, error=/);
    expect(validateExpressions('{{ _.a | }}')[0]).toMatch(/^Invalid Jinja expression/);
    expect(validateExpressions('{% if x %}unclosed')[0]).toMatch(/endif/);
    expect(validateExpressions('<% $.a %> {{ _.a }}')[0]).toMatch(
      /already contains an expression of type YAQL/,
    );
  });
});

describe('evaluateYaql / evaluateJinja', () => {
  it('take bare expressions and tolerate their delimiters', () => {
    expect(evaluateYaql('$.n + 1', data)).toBe(4);
    expect(evaluateYaql('<% $.n + 1 %>', data)).toBe(4);
    expect(evaluateJinja('_.n + 1', data)).toBe(4);
    expect(evaluateJinja('{{ _.n + 1 }}', data)).toBe(4);
    expect(evaluateYaql('4.0 / 2', data)).toBe(2);
    expect(evaluate('<% 1000000000 * 1000000000000 %>', data)).toBe(1e21);
    expect(evaluate('x <% 1000000000 * 1000000000000 %>', data)).toBe('x 1000000000000000000000');
  });
});

describe('prepareLayeredContext', () => {
  it('looks keys up layer by layer, first hit wins (DSL-9.2)', () => {
    const ctx = prepareLayeredContext(
      { __task_execution: { id: 't', name: 'x' } },
      { __env: { e: 1 } },
      { a: 'task', shared: 'inbound' },
      null,
      { shared: 'global', g: true },
      { shared: 'input', i: 0 },
    );
    expect(
      evaluate(
        { a: '<% $.a %>', s: '<% $.shared %>', g: '{{ _.g }}', i: '<% $.i %>', env: '<% env().e %>' },
        ctx,
      ),
    ).toEqual({
      a: 'task',
      s: 'inbound',
      g: true,
      i: 0,
      env: 1,
    });
  });
});

describe('prepareContext', () => {
  it('gives the same results as raw data and ignores later host mutation', () => {
    const host = { a: [1, 2, 3], m: { k: 'v' } };
    const prepared = prepareContext(host);
    expect(evaluate('<% $.a.sum() %>', prepared)).toBe(6);
    expect(evaluateYaql('$.m.k', prepared)).toBe('v');
    expect(evaluateJinja('_.a | length', prepared)).toBe(3);
    host.a.push(4);
    expect(evaluate('<% $.a.sum() %>', prepared)).toBe(6);
    expect(evaluate('<% $.a.sum() %>', host)).toBe(10);
  });
});

describe('Jinja generators (select, map, unique, ...)', () => {
  it('are lazy, always true, and evaluated once per consumer', () => {
    const d = { l: [3, 1, 3, 2], s: 'abc', users: [{ n: 'a' }, { n: 'b' }] };
    expect(evaluateJinja('_.l | unique', d)).toEqual([3, 1, 2]);
    expect(evaluateJinja('_.l | unique | list', d)).toEqual([3, 1, 2]);
    expect(evaluateJinja('not (_.l | select("gt", 10))', d)).toBe(false);
    expect(evaluateJinja('(_.s | select("odd")) | int', d)).toBe(0);
    expect(() => evaluateJinja('_.l | select | length', d)).toThrow(
      "object of type 'generator' has no len()",
    );
    expect(evaluateJinja('_.l | select | list | length', d)).toBe(4);
    expect(evaluateJinja('_.users | map(attribute="n") | join(",")', d)).toBe('a,b');
    expect(() => evaluateJinja('_.users | map(attribute="zz")', d)).toThrow(ExpressionError);
    expect(evaluateJinja('_.missing | items | list', d)).toEqual([]);
  });
});
