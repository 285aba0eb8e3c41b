import { ExpressionError, evaluate, evaluateJinja, evaluateYaql } from './index';

/**
 * Expressions come from workflow authors: they must not reach the process, JS prototypes or the
 * host's objects, whatever they try. Each case must fail with an ExpressionError or return plain
 * data, and the host must be unchanged afterwards.
 */
const data = { a: 1, s: 'x', l: [1, 2], d: { k: 'v' } };

const YAQL_ESCAPES = [
  '$.constructor',
  "$['constructor']",
  "$['__proto__']",
  '$.__proto__',
  '$.toString()',
  '$.s.constructor',
  "$.s.constructor('return process')()",
  '$.l.constructor',
  'constructor()',
  'toString()',
  'hasOwnProperty(a)',
  'valueOf()',
  "call('constructor')",
  'require(fs)',
  'process()',
  'eval("1")',
  'Function("return process")()',
  'globalThis()',
  "$.d.get('constructor')",
  "$.d.get('__proto__')",
  "dict('__proto__' => 1).keys()",
  '$.l.where($.constructor)',
  "'x'.constructor()",
  '#operator_+(1, 2)',
  'range(100000000).len()',
  "'ab' * 1000000000",
  '[1] * 100000000',
];

const JINJA_ESCAPES = [
  '_.constructor',
  "_['constructor']",
  "_['__proto__']",
  '_.__proto__',
  '_.__class__',
  "''.__class__.__mro__",
  "''.__class__.__mro__[1].__subclasses__()",
  '_.s.constructor',
  "_.s.constructor.constructor('return process')()",
  '_.s.upper.constructor',
  '_.s.upper.__globals__',
  'range.constructor',
  "range.constructor('return process')()",
  'range.__init__.__globals__',
  'cycler.__init__.__globals__.os',
  'lipsum.__globals__',
  'self._TemplateReference__context',
  'config.items()',
  'request.application.__globals__',
  '_.d.keys.__self__',
  '_.d.toString()',
  '_.d.hasOwnProperty("k")',
  '_ | attr("constructor")',
  '_ | attr("__class__")',
  '_.l | map("constructor") | list',
  '_.l | select("constructor") | list',
  '_.l | constructor',
  '_.l is constructor',
  'process',
  'require',
  'globalThis',
  'range(10000000) | list',
  "'ab' * 1000000000",
  "'{0.__class__}'.format(_)",
  "'{0.constructor}'.format(_)",
];

function expectSafe(run: () => unknown): void {
  let result: unknown;
  try {
    result = run();
  } catch (e) {
    expect(e).toBeInstanceOf(ExpressionError);
    expect((e as ExpressionError).message).not.toMatch(/\bat .*\.ts:\d+/);
    return;
  }
  // If it evaluates, it is plain data, never a function or a host object.
  const check = (v: unknown): void => {
    expect(typeof v).not.toBe('function');
    if (Array.isArray(v)) v.forEach(check);
    else if (v !== null && typeof v === 'object') {
      expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
      Object.values(v).forEach(check);
    }
  };
  check(result);
}

describe('sandbox', () => {
  afterEach(() => {
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
    expect(Object.prototype).not.toHaveProperty('k');
  });

  it.each(YAQL_ESCAPES)('YAQL %s cannot escape', (expr) => {
    expectSafe(() => evaluateYaql(expr, data));
  });

  it.each(JINJA_ESCAPES)('Jinja %s cannot escape', (expr) => {
    expectSafe(() => evaluateJinja(expr, data));
    expectSafe(() => evaluate(`x {{ ${expr} }}`, data));
  });

  it('keeps __proto__ keys as data and never pollutes Object.prototype', () => {
    const out = evaluateYaql("dict('__proto__' => dict(polluted => 1))", {}) as Record<string, unknown>;
    expect(Object.prototype.hasOwnProperty.call(out, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    const merged = evaluateYaql("$.a.mergeWith(dict('__proto__' => dict(polluted => 1)))", { a: { x: 1 } });
    expect((merged as Record<string, unknown>).x).toBe(1);
    const viaJinja = evaluateJinja("{'__proto__': {'polluted': 1}}", {}) as Record<string, unknown>;
    expect(Object.prototype.hasOwnProperty.call(viaJinja, '__proto__')).toBe(true);
    const input = JSON.parse('{"__proto__": {"polluted": 1}, "b": 2}') as unknown;
    expect(evaluateYaql('$.keys()', input)).toEqual(['__proto__', 'b']);
    expect(evaluate({ v: '<% $ %>' }, input)).toEqual({ v: { ['__proto__']: { polluted: 1 }, b: 2 } });
  });

  it('does not hand host objects or functions to expressions', () => {
    const hostile = {
      fn: () => 'called',
      date: new Date(0),
      cls: new (class Secret {})(),
      nested: { f: Math.max },
    };
    expect(evaluateYaql('$.fn', hostile)).toBeNull();
    expect(evaluateYaql('$.nested.f', hostile)).toBeNull();
    expect(evaluateYaql('$.date', hostile)).toBe('1970-01-01 00:00:00');
    expect(typeof evaluateYaql('$.cls', hostile)).toBe('string');
    expect(() => evaluateJinja('_.fn()', hostile)).toThrow(ExpressionError);
  });

  it('bounds work: deep nesting and huge results fail cleanly', () => {
    const deep = `${'('.repeat(20000)}1${')'.repeat(20000)}`;
    expect(() => evaluateYaql(deep, {})).toThrow(ExpressionError);
    expect(() => evaluateJinja(deep, {})).toThrow(ExpressionError);
    expect(() => evaluateYaql('sequence().len()', {})).toThrow(ExpressionError);
  });
});
