import { ExpressionError } from './errors';
import { evaluateJinja } from './jinja/engine';
import { evaluateYaql } from './yaql/engine';

const failure = (run: () => unknown): ExpressionError => {
  try {
    run();
  } catch (e) {
    if (e instanceof ExpressionError) return e;
    throw e;
  }
  throw new Error('no failure');
};

describe('the position of a syntax error', () => {
  it.each([
    ['1 +* 2', 3],
    ['$.a + ', 5],
    ['$.a # b', 4],
    ['$.__x', 2],
  ])('YAQL %j at %d', (expr, at) => {
    const e = failure(() => evaluateYaql(expr, { a: 1 }));
    expect([e.expression, e.position]).toEqual([expr.trim(), at]);
  });

  it.each([
    ['{{ a + }}', ' a + ', 5],
    ['{{ a b }}', ' a b ', 3],
    ['{{ (a }}', ' (a ', 4],
    ['{{ a ? b }}', ' a ? b ', 3],
    ["{{ 'open }}", " 'open ", 1],
  ])('Jinja %j in %j at %d', (text, inner, at) => {
    const e = failure(() => evaluateJinja(text, { a: 1 }));
    expect([e.expression, e.position]).toEqual([inner, at]);
  });

  it('is null for a failure of evaluation', () => {
    expect(failure(() => evaluateYaql('$.a.b()', { a: 1 })).position).toBeNull();
    expect(failure(() => evaluateJinja('{{ 1 / 0 }}', {})).position).toBeNull();
  });
});
