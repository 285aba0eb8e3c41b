#!/usr/bin/python3
"""Registry-driven conformance set: libs/expressions/test/golden/registry.json.

Run with the Debian interpreter (python3-yaql, python3-jinja2, python3-yaml installed):
    /usr/bin/python3 libs/expressions/tools/gen-registry.py

Coverage comes from what the reference registers, not from a hand-kept list:
- YAQL: every function definition (each overload) in the context chain of yaql.create_context(),
  created as Mistral creates it (mistral/expressions/yaql_expression.py: YaqlFactory with
  keyword_operator '=>', allow_delegates False, engine options yaql.limitIterators -1,
  yaql.memoryQuota -1, yaql.convertTuplesToLists True, yaql.convertSetsToLists False,
  yaql.iterableDicts False, yaql.convertOutputData True; input converted with convert_input_data),
  plus Mistral's `mistral.expression.functions` entry points (pyproject.toml of openstack/mistral).
- Jinja: every filter, test and global of SandboxedEnvironment(undefined=StrictUndefined,
  trim_blocks, lstrip_blocks), plus Mistral's functions as filters and as globals bound to the data
  (mistral/expressions/jinja_expression.py).
- Strings: mistral.expressions.evaluate / evaluate_recursively (jinja is tried before yaql; a string
  is an expression only when its pattern matches: '<%.*?%>', '({{(.*?)}})' or '({%(.*?)%})').

Every overload is instrumented: each case records which overloads (yaql), filters, tests and globals
(jinja) it reached, and the generator refuses to write the file while a registered function has
fewer than MIN_CASES cases reaching it. Cases come from registry_cases.py (hand-written, the
meaningful ones) and from the signatures (type-driven: a value of each declared parameter type and
a value of the wrong type, so that every overload is dispatched and refused at least once).

Mistral functions that read the database (execution, executions, task, tasks, global) and uuid run
against a fixed stub (HOST below, written into the golden file so the TypeScript test answers the
same): the engine supplies the real data through ExpressionHost.
"""
import collections
import copy
import datetime
import functools
import importlib.util
import inspect
import json
import os
import re
import sys
import warnings

import jinja2
import yaml
import yaql
from jinja2.sandbox import SandboxedEnvironment
from yaql.language import factory, specs, utils, yaqltypes

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, '..', 'test', 'golden', 'registry.json')
MIN_CASES = 3

_spec = importlib.util.spec_from_file_location('gen_golden', os.path.join(HERE, 'gen-golden.py'))
gen_golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen_golden)
DEFAULT = gen_golden.DEFAULT
encode, contains_set, contains_undefined = gen_golden.encode, gen_golden.contains_set, gen_golden.contains_undefined

ENGINE_OPTIONS = {
    'yaql.limitIterators': -1,
    'yaql.memoryQuota': -1,
    'yaql.convertTuplesToLists': True,
    'yaql.convertSetsToLists': False,
    'yaql.iterableDicts': False,
    'yaql.convertOutputData': True,
}
ENGINE = factory.YaqlFactory(keyword_operator='=>', allow_delegates=False).create(options=ENGINE_OPTIONS)

# ---------------------------------------------------------------------------------------------
# Mistral's functions (mistral/expressions/std_functions.py at openstack/mistral HEAD), with the
# database replaced by HOST. yaml_dump/yaml_parse use mistral.utils.safe_yaml's rules.

HOST = {
    'execution': {'id': 'ex-1', 'name': 'wf', 'spec': {'name': 'wf'}, 'input': {'a': 1}, 'params': {},
                  'created_at': '2024-01-02 03:04:05', 'updated_at': '2024-01-02 03:04:06',
                  'root_execution_id': None},
    'tasks': [{'id': 't-1', 'name': 'first', 'spec': {}, 'state': 'SUCCESS', 'state_info': None,
               'result': 1, 'published': {'x': 1}, 'type': 'ACTION', 'workflow_execution_id': 'ex-1',
               'created_at': '2024-01-02 03:04:05', 'updated_at': '2024-01-02 03:04:06'},
              {'id': 't-2', 'name': 'second', 'spec': {}, 'state': 'ERROR', 'state_info': 'boom',
               'result': None, 'published': {}, 'type': 'ACTION', 'workflow_execution_id': 'ex-1',
               'created_at': '2024-01-02 03:04:07', 'updated_at': '2024-01-02 03:04:08'}],
    'globals': {'g': 'global-value'},
    'uuid': '5b2a0d1c-1c2d-4e5f-8a9b-0c1d2e3f4a5b',
}


class _SafeLoader(yaml.SafeLoader):
    """mistral.utils.safe_yaml.SafeLoader: anchors and aliases are plain text."""

    def fetch_alias(self):
        return self.fetch_plain()

    def fetch_anchor(self):
        return self.fetch_plain()

    def check_plain(self):
        if self.peek() == '@':
            return True
        return super().check_plain()


class _SafeDumper(yaml.SafeDumper):
    def ignore_aliases(self, data):
        return True


_SafeDumper.add_representer(utils.FrozenDict, yaml.SafeDumper.represent_dict)


def env_(context):
    return context['__env']


def execution_(context):
    return copy.deepcopy(HOST['execution'])


def executions_(context, id=None, root_execution_id=None, state=None, from_time=None, to_time=None):
    ex = HOST['execution']
    ok = (id in (None, ex['id'])) and (root_execution_id in (None, ex['root_execution_id'])) and state in (None, 'RUNNING')
    return [copy.deepcopy(ex)] if ok else []


def task_(context, task_name=None):
    found = [t for t in HOST['tasks'] if task_name is None or t['name'] == task_name]
    return copy.deepcopy(found[-1]) if found else None


def tasks_(context, workflow_execution_id=None, recursive=False, state=None, flat=False):
    return [copy.deepcopy(t) for t in HOST['tasks']
            if (workflow_execution_id in (None, t['workflow_execution_id'])) and (state in (None, t['state']))]


def uuid_(context=None):
    return HOST['uuid']


def global_(context, var_name):
    return HOST['globals'].get(var_name)


def json_parse_(context, data):
    return json.loads(data)


def _jsonable(data):
    # oslo_serialization.jsonutils.dumps converts what json cannot (sets, tuples, FrozenDict) first.
    if isinstance(data, (dict, utils.FrozenDict)):
        return {k: _jsonable(v) for k, v in data.items()}
    if isinstance(data, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in data]
    # ... and reads iterators other than generators (yaql's map, filter, islice, chain) into lists.
    if isinstance(data, collections.abc.Iterator) and not inspect.isgenerator(data):
        return [_jsonable(v) for v in data]
    return data


def json_dump_(context, data):
    return json.dumps(_jsonable(data), indent=4)


def yaml_parse_(context, data):
    return yaml.load(data, _SafeLoader)


def yaml_dump_(context, data):
    return yaml.dump(data, Dumper=_SafeDumper, default_flow_style=False)


MISTRAL_FUNCTIONS = collections.OrderedDict([
    ('env', env_), ('execution', execution_), ('executions', executions_), ('global', global_),
    ('json_parse', json_parse_), ('json_dump', json_dump_), ('task', task_), ('tasks', tasks_),
    ('uuid', uuid_), ('yaml_parse', yaml_parse_), ('yaml_dump', yaml_dump_),
])

# ---------------------------------------------------------------------------------------------
# The registries, instrumented.

HITS = collections.Counter()
ROOT = yaql.create_context()
for _name, _fn in MISTRAL_FUNCTIONS.items():
    ROOT.register_function(_fn, name=_name)


def _type_name(t):
    if t is None:
        return 'any'
    if isinstance(t, yaqltypes.PythonType):
        types = t.python_type if isinstance(t.python_type, tuple) else (t.python_type,)
        return '|'.join(x.__name__ for x in types) + ('?' if t.nullable else '')
    return type(t).__name__


def _signature(fd):
    params = []
    for p in sorted(fd.parameters.values(), key=lambda p: (p.position if p.position is not None else 999, str(p.name))):
        if isinstance(p.value_type, yaqltypes.HiddenParameterType):
            continue
        kind = '' if isinstance(p.position, int) else '**' if p.name == '**' or str(p.name).endswith('kwargs') else '*'
        if p.position is None and p.name != '*':
            kind = '**'
        default = '' if p.default is specs.NO_DEFAULT else '=' + repr(p.default)
        params.append('%s%s: %s%s' % (kind, p.alias or p.name, _type_name(p.value_type), default))
    return '(%s)' % ', '.join(params)


def yaql_registry():
    """Every overload the root context chain holds, keyed 'name kind(signature)'."""
    out = []
    seen = set()
    ctx = ROOT
    while ctx is not None:
        for name, fds in ctx._functions.items():
            for fd in fds:
                if id(fd) in seen:
                    continue
                seen.add(id(fd))
                kind = ('M' if fd.is_method else '') + ('F' if fd.is_function else '')
                key = '%s %s%s' % (name, kind, _signature(fd))
                out.append((name, kind, key, fd))
        ctx = ctx.parent
    out.sort(key=lambda x: x[2])
    return out


YAQL_OVERLOADS = yaql_registry()
for _name, _kind, _key, _fd in YAQL_OVERLOADS:
    def _wrap(payload, key=_key):
        @functools.wraps(payload)
        def wrapper(*args, **kwargs):
            HITS['yaql:' + key] += 1
            return payload(*args, **kwargs)
        return wrapper
    _fd.payload = _wrap(_fd.payload)

JENV = SandboxedEnvironment(undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
JINJA_FILTERS = sorted(JENV.filters)
JINJA_TESTS = sorted(JENV.tests)
JINJA_GLOBALS = sorted(JENV.globals)
for _name, _fn in MISTRAL_FUNCTIONS.items():
    JENV.filters[_name] = _fn


def _wrap_jinja(kind, name, fn):
    if getattr(fn, 'jinja_pass_arg', None) is not None or inspect.isclass(fn):
        pass

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        HITS['jinja-%s:%s' % (kind, name)] += 1
        return fn(*args, **kwargs)
    if hasattr(fn, 'jinja_pass_arg'):
        wrapper.jinja_pass_arg = fn.jinja_pass_arg
    return wrapper


for _name in list(JENV.filters):
    JENV.filters[_name] = _wrap_jinja('filter', _name, JENV.filters[_name])
for _name in list(JENV.tests):
    JENV.tests[_name] = _wrap_jinja('test', _name, JENV.tests[_name])
for _name in list(JENV.globals):
    JENV.globals[_name] = _wrap_jinja('global', _name, JENV.globals[_name])

# ---------------------------------------------------------------------------------------------
# Evaluation exactly as Mistral evaluates (mistral/expressions/*).

YAQL_INLINE = re.compile('<%.*?%>')
JINJA_EXPR = re.compile('({{(.*?)}})')
JINJA_BLOCK = re.compile('({%(.*?)%})')


def yaql_context(data):
    ctx = ROOT.create_child_context()
    ctx['$'] = utils.convert_input_data(data)
    if isinstance(data, dict):
        ctx['__env'] = data.get('__env')
        ctx['__execution'] = data.get('__execution')
        ctx['__task_execution'] = data.get('__task_execution')
    return ctx


def yaql_eval(expression, data):
    result = ENGINE(expression.strip()).evaluate(context=yaql_context(data))
    if isinstance(result, utils.FrozenDict):
        return result._d
    if inspect.isgenerator(result) or isinstance(result, collections.abc.Iterator):
        return list(result)
    return result


def jinja_context(data):
    ctx = {'_': data}
    for name, fn in MISTRAL_FUNCTIONS.items():
        ctx[name] = _wrap_jinja('global', name, functools.partial(fn, data))
    if isinstance(data, dict):
        ctx['__env'] = data.get('__env')
        ctx['__execution'] = data.get('__execution')
        ctx['__task_execution'] = data.get('__task_execution')
    return ctx


def jinja_expression(expression, data):
    result = JENV.compile_expression(expression, undefined_to_none=False)(**jinja_context(data))
    str(result)
    return result


def mistral_string(text, data):
    """mistral.expressions.evaluate for one string: InlineJinjaEvaluator, then InlineYAQLEvaluator."""
    if JINJA_EXPR.search(text) or JINJA_BLOCK.search(text):
        patterns = JINJA_EXPR.findall(text)
        if patterns and patterns[0][0] == text:
            return jinja_expression(patterns[0][1], data)
        return JENV.from_string(text).render(**jinja_context(data))
    found = YAQL_INLINE.findall(text)
    result = text
    for expr in found:
        value = yaql_eval(expr.strip('<%>'), data)
        if len(text) == len(expr):
            result = value
        else:
            result = result.replace(expr, str(value))
    return result


def mistral_recursive(value, data):
    """mistral.expressions.evaluate_recursively (task input, publish): values only, keys as written."""
    value = copy.deepcopy(value)
    if not data:
        return value
    if isinstance(value, dict):
        return {k: mistral_recursive_item(v, data) for k, v in value.items()}
    if isinstance(value, list):
        return [mistral_recursive_item(v, data) for v in value]
    if isinstance(value, str):
        return mistral_recursive_item(value, data)
    return value


def mistral_recursive_item(item, data):
    if isinstance(item, str):
        return mistral_string(item, data)
    return mistral_recursive(item, data)


MODES = {'yaql': yaql_eval, 'jinja': jinja_expression, 'string': mistral_string, 'recursive': mistral_recursive}


def run(mode, expr, data, written_for=None):
    HITS_BEFORE = dict(HITS)
    case = {'mode': mode, 'expr': expr}
    if written_for:
        case['for'] = written_for
    if data is not DEFAULT:
        case['context'] = data
    try:
        # a private copy: some reference functions mutate their argument in place (Jinja's indent
        # does `s += "\n"`, which extends a list), and a mutated DEFAULT leaks into every later case
        value = MODES[mode](expr, copy.deepcopy(data))
        if hasattr(value, '__next__'):
            value = list(value)
        if contains_undefined(value):
            raise jinja2.UndefinedError('undefined value inside the result')
        json.dumps(encode(value))
        case['result'] = encode(value)
        if contains_set(value):
            case['set'] = True
        else:
            case['str'] = str(value)
    except Exception as e:  # the reference raised: the case must error
        # an object's memory address differs from run to run: masked so that the file is reproducible
        case['error'] = re.sub(r' at 0x[0-9a-f]+>', ' at 0x…>', '%s: %s' % (type(e).__name__, e))
    case['reaches'] = sorted(k for k in HITS if HITS[k] != HITS_BEFORE.get(k, 0))
    return case


# ---------------------------------------------------------------------------------------------
# Type-driven cases: for each overload, its parameters filled with values of the declared types
# (two choices each) and once with a value of a wrong type.

SAMPLES = {
    'str': ["'a,b'", "$.s"],
    'int': ['2', '-1'],
    'float': ['2.5', '$.f'],
    'bool': ['true', 'false'],
    'Mapping': ['{a => 1, b => 2}', '$.d'],
    'Iterable': ['[3, 1, 2]', '$.users'],
    'Sequence': ['[3, 1, 2]', '$.ls'],
    'Set': ['set(1, 2)', "set('a')"],
    'Pattern': ["regex('(l+)o')", "regex('[aeiou]')"],
    'timedelta': ['timespan(hours => 1)', 'timespan(days => 2, seconds => 5)'],
    'datetime': ['datetime(2020, 1, 2, 3, 4, 5)', "datetime('2021-03-04T05:06:07')"],
    'Lambda': ['$', 'true'],
    'object': ['$.l', 'null'],
    'MappingRule': ['a => 1', 'b => [1]'],
    'OrderingIterable': ['$.users.orderBy($.role)', '[2, 1].orderBy($)'],
}
THIRD = {'object': "'x'", 'int': '0', 'str': "''", 'Iterable': '[]', 'Sequence': '[]', 'Mapping': '{}', 'float': '0',
         'Lambda': 'null', 'Set': 'set()', 'bool': 'null'}
WRONG = {'str': '1', 'int': "'x'", 'float': "'x'", 'bool': "'x'", 'Mapping': '[1]', 'Iterable': '1', 'Sequence': '1',
         'Set': '[1]', 'Pattern': '1', 'timedelta': '1', 'datetime': '1', 'OrderingIterable': '[1]', 'Lambda': None,
         'object': None, 'MappingRule': '1'}


def _kind_of(value_type):
    if value_type is None:
        return 'object'
    if isinstance(value_type, yaqltypes.Lambda):
        return 'Lambda'
    if isinstance(value_type, yaqltypes.MappingRule):
        return 'MappingRule'
    if isinstance(value_type, yaqltypes.String):
        return 'str'
    if isinstance(value_type, yaqltypes.DateTime):
        return 'datetime'
    if isinstance(value_type, yaqltypes.Sequence):
        return 'Sequence'
    if isinstance(value_type, yaqltypes.Iterable):
        return 'Iterable'
    if isinstance(value_type, yaqltypes.Number):
        return 'float'
    if isinstance(value_type, yaqltypes.PythonType):
        types = value_type.python_type if isinstance(value_type.python_type, tuple) else (value_type.python_type,)
        for t in types:
            if t.__name__ in SAMPLES:
                return t.__name__
            if t is bool:
                return 'bool'
    return 'object'


# Hand-written only: non-deterministic, defining code, or endless without a count (Mistral would
# hang serializing them: limitIterators is -1).
HAND_ONLY = ('call', 'def', 'examine', 'random', 'localtz', 'now', 'repeat', 'cycle', 'sequence', 'generate',
             'generateMany')


def typed_cases(name, kind, fd):
    if name.startswith('#') or name.startswith('*') or name in HAND_ONLY:
        return []  # operators and properties come from syntax; these are hand-written
    params = [p for p in sorted(fd.parameters.values(), key=lambda p: (p.position if p.position is not None else 999))
              if not isinstance(p.value_type, yaqltypes.HiddenParameterType) and isinstance(p.position, int)]
    required = [p for p in params if p.default is specs.NO_DEFAULT]
    kinds = [_kind_of(p.value_type) for p in required]
    out = []
    variants = [[SAMPLES[k][0] for k in kinds], [SAMPLES[k][1] for k in kinds], [THIRD.get(k, SAMPLES[k][0]) for k in kinds]]
    for i, k in enumerate(kinds):
        if WRONG.get(k):
            wrong = [SAMPLES[x][0] for x in kinds]
            wrong[i] = WRONG[k]
            variants.append(wrong)
            break
    for args in variants:
        if 'M' in kind and args:
            out.append('(%s).%s(%s)' % (args[0], name, ', '.join(args[1:])))
        if 'F' in kind:
            out.append('%s(%s)' % (name, ', '.join(args)))
    return out


JINJA_VALUES = ['_.l', '_.s', '_.d', 'none', '2.5', '_.users']
# Hand-written only (registry_cases.JINJA): the reference's answer is a random pick
JINJA_HAND_ONLY = ('random',)


def jinja_typed_cases():
    out = []
    for name in JINJA_FILTERS:
        if name not in JINJA_HAND_ONLY:
            out += ['%s | %s' % (v, name) for v in JINJA_VALUES]
    for name in JINJA_TESTS:
        arity = len([p for p in inspect.signature(JENV.tests[name].__wrapped__).parameters.values()
                     if p.default is inspect.Parameter.empty and p.kind == p.POSITIONAL_OR_KEYWORD]) - 1
        extra = '' if arity <= 0 else ' 3' if re.match(r'^\w+$', name) else ' 3'
        if re.match(r'^\w+$', name):
            out += ['%s is %s%s' % (v, name, extra) for v in JINJA_VALUES]
        else:
            out += ['%s is %s 3' % (v, name) for v in ['3', '2.5', '_.s']]
    return out


def main():
    warnings.simplefilter('ignore')
    sys.path.insert(0, HERE)
    import registry_cases as rc

    cases = []
    for mode, items in (('yaql', rc.YAQL), ('jinja', rc.JINJA), ('string', rc.STRINGS), ('recursive', rc.RECURSIVE)):
        for item in items:
            expr, data = item if isinstance(item, tuple) else (item, DEFAULT)
            cases.append(run(mode, expr, data))
    typed = {}
    for name, kind, key, fd in YAQL_OVERLOADS:
        for expr in typed_cases(name, kind, fd):
            typed.setdefault(expr, name)
    hand = {c['expr'] for c in cases if isinstance(c['expr'], str)}
    for expr, name in typed.items():
        if expr not in hand:
            cases.append(run('yaql', expr, DEFAULT, name))
    for expr in jinja_typed_cases():
        if expr not in hand:
            cases.append(run('jinja', expr, DEFAULT))
    cases = [c for c in cases if ' at 0x' not in json.dumps(c.get('result', '')).lower()]

    reached = collections.Counter(r for c in cases for r in c['reaches'])
    named = collections.Counter()
    for c in cases:
        names = {r.split(' ')[0][5:] for r in c['reaches'] if r.startswith('yaql:')}
        if c.get('for'):
            names.add(c['for'])
        named.update(names)
    registry = {
        'yaql': [{'name': n, 'kind': k, 'overload': key} for n, k, key, _ in YAQL_OVERLOADS],
        'mistral': list(MISTRAL_FUNCTIONS),
        'jinjaFilters': JINJA_FILTERS,
        'jinjaTests': JINJA_TESTS,
        'jinjaGlobals': JINJA_GLOBALS,
    }
    thin = []
    by_name = {n: named[n] for n, *_ in YAQL_OVERLOADS}
    by_name.update({n: named[n] for n in MISTRAL_FUNCTIONS})
    for n, k, key, _ in YAQL_OVERLOADS:
        if reached['yaql:' + key] == 0:
            thin.append('overload never reached: ' + key)
    thin += ['yaql %s: %d cases' % (n, c) for n, c in sorted(by_name.items()) if c < MIN_CASES]
    for kind, names in (('filter', JINJA_FILTERS + list(MISTRAL_FUNCTIONS)), ('test', JINJA_TESTS),
                        ('global', JINJA_GLOBALS + list(MISTRAL_FUNCTIONS))):
        thin += ['jinja %s %s: %d cases' % (kind, n, reached['jinja-%s:%s' % (kind, n)])
                 for n in names if reached['jinja-%s:%s' % (kind, n)] < MIN_CASES]
    allowed_thin = set(rc.UNREACHABLE)
    problems = [t for t in thin if t not in allowed_thin]
    if problems:
        print('\n'.join(problems))
        sys.exit('%d registered functions lack cases' % len(problems))
    doc = {'generator': 'libs/expressions/tools/gen-registry.py', 'engineOptions': ENGINE_OPTIONS,
           'defaultContext': DEFAULT, 'host': HOST, 'registry': registry,
           'unreachable': rc.UNREACHABLE, 'cases': cases}
    with open(OUT, 'w') as fh:
        json.dump(doc, fh, indent=1, ensure_ascii=False)
        fh.write('\n')
    print('registry.json: %d yaql overloads (%d names), %d mistral, %d filters, %d tests, %d globals; %d cases (%d errors)' % (
        len(YAQL_OVERLOADS), len({n for n, *_ in YAQL_OVERLOADS}), len(MISTRAL_FUNCTIONS), len(JINJA_FILTERS),
        len(JINJA_TESTS), len(JINJA_GLOBALS), len(cases), sum(1 for c in cases if 'error' in c)))


if __name__ == '__main__':
    main()
