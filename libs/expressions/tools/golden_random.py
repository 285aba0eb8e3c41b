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


_J_ATOMS = ['_.n', '_.f', '_.s', '_.l', '_.ls', '_.d', '_.z', '_.t', '_.e', '_.empty', '_.users', '_.mixed', '1', '2', '0', '-1',
            '2.5', "'a'", "'abc'", 'true', 'false', 'none', '[1, 2]', "{'a': 1}", '_.neg', '_.pairs', '_.nested.a', '3.0', '(1, 2)',
            '_.missing']
_J_BINOPS = ['+', '-', '*', '/', '//', '%', '~', '==', '!=', '<', '>', '<=', '>=', 'and', 'or', 'in', 'not in']
_J_FILTERS = ['length', 'first', 'last', 'list', 'sort', 'join(",")', 'upper', 'lower', 'default(1)', 'int', 'float', 'string',
              'sum', 'reverse', 'unique', "map('string')", 'abs', 'round', 'max', 'min', 'trim', 'title', 'capitalize', 'count',
              'dictsort', 'tojson', 'select', 'reject', "select('odd')", 'batch(2)', "replace('a', 'b')", 'items',
              "selectattr('age')", "map(attribute='name')"]
_J_TESTS = ['defined', 'undefined', 'number', 'string', 'none', 'mapping', 'sequence', 'iterable', 'odd', 'even', 'integer',
            'float', 'boolean', 'lower', 'upper', 'true', 'false']
_J_ATTRS = ['upper()', 'split()', 'a', 'name', 'strip()', 'count(1)', 'index(1)']


def random_jinja_cases(seed, count):
    rnd = random.Random(seed)

    def expr(d=0):
        r = rnd.random()
        if d > 3 or r < 0.3:
            return rnd.choice(_J_ATOMS)
        if r < 0.5:
            return '%s %s %s' % (expr(d + 1), rnd.choice(_J_BINOPS), expr(d + 1))
        if r < 0.7:
            return '(%s) | %s' % (expr(d + 1), rnd.choice(_J_FILTERS))
        if r < 0.78:
            return '(%s) is %s%s' % (expr(d + 1), rnd.choice(['', 'not ']), rnd.choice(_J_TESTS))
        if r < 0.84:
            return 'not %s' % expr(d + 1)
        if r < 0.9:
            return '(%s)[%s]' % (expr(d + 1), rnd.choice(['0', '-1', '1', "'a'", '1:', ':-1', '::-1']))
        if r < 0.95:
            return '%s if %s else %s' % (expr(d + 1), expr(d + 1), expr(d + 1))
        return '(%s).%s' % (expr(d + 1), rnd.choice(_J_ATTRS))

    seen = []
    while len(seen) < count:
        e = '{{ %s }}' % expr()
        if e not in seen:
            seen.append(e)
    return seen


# Method-heavy YAQL: strings, dicts and queries chained and formatted.
_M_ATOMS = ['$.s', '$.csv', '$.padded', '$.unicode', '$.d', '$.nested', '$.users', '$.users[0]', '$.l', '$.ls', '$.pairs', '$.items', '$.vms', "'a-b-c'", "'x'", "''", "{a => 1, b => [1, 2]}", '[3, 1, 2]', '1', '2.5', 'null', '$.n', 'true']
_M_METHODS = ["format($.n)", "format(1, 2)", "replace('a', 'b')", "replace('l', '', 1)", "split(',')", "split('-', 1)", "split()", "join('-')", "toUpper()", "trim()", "trimLeft('-')", "substring(1)", "substring(1, 2)", "indexOf('a')", "startsWith('a')", "endsWith('c')", "len()", "keys()", "values()", "items()", "get(a)", "get(x, 0)", "set(k, 1)", "delete(a)", "containsKey(a)", "containsValue(1)", "mergeWith({a => 9, z => [5]})", "groupBy($.role)", "groupBy($[0], $[1])", "select($.name)", "where($.age > 26)", "orderBy($)", "orderBy($.age)", "sum()", "min()", "max()", "toDict($.name)", "distinct()", "flatten()", "enumerate()", "zip([1, 2])", "first()", "last(0)", "skip(1)", "take(2)", "aggregate($1 + $2)", "select(str($))", "select($.len())", "toList()", "toSet()", "reverse()", "count()", "matches('a')", "toCharArray()", "characters()", "concat([1])", "append(1)", "indexWhere($ = 1)", "contains('a')", "isEmpty()", "norm()", "rightSplit('-', 1)", "select([$, 1]).toDict($[0], $[1])", "select({k => $})", "where(isString($))", "select(int($))", "select(float($))", "select(bool($))", "any($ > 1)", "all($ > 1)", "single()", "selectMany($)", "thenBy($)"]
_M_FUNCS = ['str', 'len', 'isString', 'isList', 'isDict', 'int', 'float', 'bool', 'dict', 'list', 'switch', 'coalesce', 'json_dump', 'json_pp']


def random_method_cases(seed, count):
    rnd = random.Random(seed)

    def expr(d=0):
        r = rnd.random()
        if d > 2 or r < 0.25:
            return rnd.choice(_M_ATOMS)
        if r < 0.75:
            return '%s.%s' % (expr(d + 1), rnd.choice(_M_METHODS))
        if r < 0.85:
            return '%s(%s)' % (rnd.choice(_M_FUNCS), expr(d + 1))
        if r < 0.92:
            return '%s + %s' % (expr(d + 1), expr(d + 1))
        return "'{0}-{1}'.format(%s, %s)" % (expr(d + 1), expr(d + 1))

    seen = []
    while len(seen) < count:
        e = expr()
        if e not in seen:
            seen.append(e)
    return seen


# Jinja templates mixing text, whitespace control (-, +), if/for/set/raw and comments.
_T_TEXTS = ['a', ' ', '\n', '  \n', 'x\n  ', '\t', '\n\n', 'b ']
_T_OPENS = ['{%', '{%-', '{%+']
_T_CLOSES = ['%}', '-%}', '+%}']
_T_MISC = ['{# c #}', '{#- c -#}', '{# c -#}', '{#+ c #}', '{% raw %} {{ r }} {% endraw %}', '{%- raw -%}\n r \n{%- endraw -%}']


def random_template_cases(seed, count):
    rnd = random.Random(seed)

    def tag(body):
        return rnd.choice(_T_OPENS) + ' ' + body + ' ' + rnd.choice(_T_CLOSES)

    def out():
        return (rnd.choice(['{{', '{{-']) + ' ' + rnd.choice(['_.n', 'x', 'loop.index', '"s"']) + ' '
                + rnd.choice(['}}', '-}}']))

    def block(d=0):
        parts = []
        for _ in range(rnd.randint(1, 4)):
            r = rnd.random()
            if r < 0.35:
                parts.append(rnd.choice(_T_TEXTS))
            elif r < 0.55:
                parts.append(out())
            elif r < 0.7 and d < 2:
                parts.append(tag('if _.t') + block(d + 1) + tag('else') + block(d + 1) + tag('endif'))
            elif r < 0.85 and d < 2:
                parts.append(tag('for x in _.l') + block(d + 1) + tag('endfor'))
            elif r < 0.92:
                parts.append(rnd.choice(_T_MISC))
            else:
                parts.append(tag('set y = 1'))
        return ''.join(parts)

    seen = []
    while len(seen) < count:
        t = block()
        if ('{{' in t or '{%' in t) and t not in seen:
            seen.append(t)
    return seen
