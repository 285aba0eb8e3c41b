"""Random YAQL expressions over the default context (fixed seed, so the file is reproducible).
They exercise operator/function combinations nobody would write by hand; most of them must fail,
and the failures must match the reference too."""
import random

_ATOMS = ['$.n', '$.f', '$.s', '$.l', '$.ls', '$.d', '$.z', '$.t', '$.e', '$.empty', '$.users', '$.mixed', '1', '2', '0',
          '-1', '2.5', "'a'", "'abc'", 'true', 'false', 'null', '[1, 2]', '{a => 1}', '$.neg', '$.pairs', '$.nested.a', '3.0']
_BINOPS = ['+', '-', '*', '/', 'mod', '=', '!=', '<', '>', '<=', '>=', 'and', 'or', 'in']
_METHODS = ['len()', 'first()', 'last()', 'sum()', 'max()', 'min()', 'reverse()', 'distinct()', 'count()', 'toList()',
            'orderBy($)', 'where($)', 'select($)', 'keys()', 'values()', 'toUpper()', 'split()', 'join(",")', 'skip(1)',
            'take(1)', 'any()', 'all()', 'flatten()', 'enumerate()', 'trim()', 'indexOf(1)', 'contains(1)', 'get(a)',
            'select([$])', 'where($ > 1)', 'select($ * 2)']
_FUNCS = ['len', 'str', 'int', 'float', 'bool', 'abs', 'isString', 'isList', 'isDict', 'isInteger', 'round', 'list', 'set']


def random_cases(seed, count):
    rnd = random.Random(seed)

    def expr(d=0):
        r = rnd.random()
        if d > 3 or r < 0.3:
            return rnd.choice(_ATOMS)
        if r < 0.55:
            return '%s %s %s' % (expr(d + 1), rnd.choice(_BINOPS), expr(d + 1))
        if r < 0.75:
            return '%s.%s' % (expr(d + 1), rnd.choice(_METHODS))
        if r < 0.85:
            return '%s(%s)' % (rnd.choice(_FUNCS), expr(d + 1))
        if r < 0.9:
            return 'not %s' % expr(d + 1)
        if r < 0.95:
            return '(%s)' % expr(d + 1)
        return '%s[%s]' % (expr(d + 1), rnd.choice(['0', '-1', '1', "'a'"]))

    seen = []
    while len(seen) < count:
        e = expr()
        if e not in seen:
            seen.append(e)
    return seen
