#!/usr/bin/python3
"""Regenerates libs/expressions/test/golden/*.json from the reference Python implementations.

Run with the Debian interpreter (python3-yaql and python3-jinja2 installed):
    /usr/bin/python3 libs/expressions/tools/gen-golden.py

Evaluation mirrors how Mistral drives the libraries:
- YAQL: a YaqlFactory with keyword operator '=>' and delegates off, engine options as Mistral's
  defaults (convertTuplesToLists on, convertSetsToLists off, iterableDicts off, output conversion
  on, no limits), a root context from yaql.create_context(), input converted with
  convert_input_data, `$__env`/`$__execution`/`$__task_execution` taken from the data, and a
  FrozenDict result unwrapped.
- Jinja: SandboxedEnvironment(undefined=StrictUndefined, trim_blocks, lstrip_blocks); a string that
  is exactly one `{{ }}` (and not `{{ a }}-{{ b }}`, which Mistral's greedy pattern mistakes for one
  expression) is compiled with compile_expression(..., undefined_to_none=False) and
  str()-ed once to surface strict-undefined errors, any other string is rendered as a template;
  `_` is the data root.
- Inline strings: Mistral's InlineYAQLEvaluator rule (a string that is one `<% %>` gives the
  native value, otherwise each occurrence is replaced by str(value)).
Each case records the result as JSON, Python's str() of it (which pins int vs float, ordering and
rendering), or the error type and message.
"""
import collections.abc
import datetime
import inspect
import json
import warnings
import os
import re
import sys

import jinja2
import yaml
import yaql
from jinja2.sandbox import SandboxedEnvironment
from yaql.language import factory, utils

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'test', 'golden')

ENGINE_OPTIONS = {
    'yaql.limitIterators': -1,
    'yaql.memoryQuota': -1,
    'yaql.convertTuplesToLists': True,
    'yaql.convertSetsToLists': False,
    'yaql.iterableDicts': False,
    'yaql.convertOutputData': True,
}
ENGINE = factory.YaqlFactory(keyword_operator='=>', allow_delegates=False).create(options=ENGINE_OPTIONS)
ROOT = yaql.create_context()


# Pure Mistral functions (those that need no database), written from their documented behaviour.
def _plain(data):
    # Mistral teaches its serializers to write yaql's FrozenDict as a dict.
    if isinstance(data, utils.FrozenDict):
        return {k: _plain(v) for k, v in data.items()}
    if isinstance(data, dict):
        return {k: _plain(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_plain(v) for v in data]
    # Mistral's jsonutils.dumps reads iterators other than generators (yaql's map, filter, islice) into lists.
    if isinstance(data, collections.abc.Iterator) and not inspect.isgenerator(data):
        return [_plain(v) for v in data]
    return data


def _json_pp(context, data=None):
    return json.dumps(_plain(data or context), indent=4).replace('\\n', '\n').replace(' \n', '\n')


def _json_dump(context, data):
    return json.dumps(_plain(data), indent=4)


def _json_parse(context, data):
    return json.loads(data)


def _yaml_parse(context, data):
    return yaml.safe_load(data)


def _env(context):
    return context['__env']


PURE_FUNCTIONS = {
    'json_pp': _json_pp,
    'json_dump': _json_dump,
    'json_parse': _json_parse,
    'yaml_parse': _yaml_parse,
    'env': _env,
}

for _name, _fn in PURE_FUNCTIONS.items():
    ROOT.register_function(_fn, name=_name)


def yaql_eval(expression, data):
    ctx = ROOT.create_child_context()
    ctx['$'] = utils.convert_input_data(data)
    if isinstance(data, dict):
        ctx['__env'] = data.get('__env')
        ctx['__execution'] = data.get('__execution')
        ctx['__task_execution'] = data.get('__task_execution')
    result = ENGINE(expression.strip()).evaluate(context=ctx)
    if isinstance(result, utils.FrozenDict):
        result = result._d
    return result


JENV = SandboxedEnvironment(undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def jinja_ctx(data):
    from functools import partial
    ctx = {'_': data}
    for name, fn in PURE_FUNCTIONS.items():
        ctx[name] = partial(fn, data)
    if isinstance(data, dict):
        ctx['__env'] = data.get('__env')
        ctx['__execution'] = data.get('__execution')
        ctx['__task_execution'] = data.get('__task_execution')
    return ctx


for _name, _fn in PURE_FUNCTIONS.items():
    JENV.filters[_name] = _fn


def jinja_eval(text, data):
    m = re.findall('({{(.*)}})', text)
    # As our spec (DSL-8.4) and implementation: only a string that is exactly one {{ }} is an
    # expression; Mistral's greedy pattern would also take '{{ a }}-{{ b }}' and fail on it.
    if m and m[0][0] == text and '}}' not in m[0][1] and '{{' not in m[0][1]:
        result = JENV.compile_expression(m[0][1], undefined_to_none=False)(**jinja_ctx(data))
        str(result)
        return result
    return JENV.from_string(text).render(**jinja_ctx(data))


def inline_yaql(text, data):
    found = re.findall('<%.*?%>', text)
    result = text
    for expr in found:
        value = yaql_eval(expr.strip('<%>'), data)
        if len(text) == len(expr):
            result = value
        else:
            result = result.replace(expr, str(value))
    return result


def encode(value):
    """JSON-safe form; sets become sorted lists (their order is not defined); datetimes and
    timespans become their str() (as our implementation hands them to the host)."""
    if isinstance(value, (datetime.datetime, datetime.timedelta)):
        return str(value)
    if isinstance(value, dict):
        return {str(k) if not isinstance(k, str) else k: encode(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted((encode(v) for v in value), key=lambda x: json.dumps(x, sort_keys=True))
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, float) and (value != value or value in (float('inf'), float('-inf'))):
        return str(value)
    return value


def contains_set(value):
    if isinstance(value, (set, frozenset)):
        return True
    if isinstance(value, dict):
        return any(contains_set(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(contains_set(v) for v in value)
    return False


def contains_undefined(value):
    if isinstance(value, jinja2.Undefined):
        return True
    if isinstance(value, dict):
        return any(contains_undefined(v) for v in value.values())
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(contains_undefined(v) for v in value)
    return False


def run(fn, text, data):
    case = {'expr': text}
    if data is not DEFAULT:
        case['context'] = data
    try:
        value = fn(text, DEFAULT if data is DEFAULT else data)
        if hasattr(value, '__next__'):
            value = list(value)
        if contains_undefined(value):
            # Mistral could not store such a result (it is not JSON): our evaluator fails here.
            raise jinja2.UndefinedError('undefined value inside the result')
        case['result'] = encode(value)
        if contains_set(value):
            case['set'] = True
        else:
            case['str'] = str(value)
    except Exception as e:  # the reference raised: the case must error
        case['error'] = '%s: %s' % (type(e).__name__, e)
    return case


DEFAULT = {
    'n': 3,
    'f': 2.5,
    'neg': -7,
    's': 'Hello World',
    'csv': 'a,b,,c',
    'padded': '  spaced out  ',
    'e': '',
    't': True,
    'no': False,
    'z': None,
    'l': [3, 1, 2],
    'ls': ['b', 'a', 'c'],
    'empty': [],
    'nested': {'a': {'b': {'c': 42}}, 'list': [{'k': 1}, {'k': 2}]},
    'users': [
        {'name': 'alice', 'age': 30, 'role': 'admin', 'tags': ['x', 'y']},
        {'name': 'bob', 'age': 25, 'role': 'dev', 'tags': ['y']},
        {'name': 'carol', 'age': 35, 'role': 'dev', 'tags': []},
    ],
    'd': {'x': 1, 'y': 2, 'w': 3},
    'pairs': [['a', 1], ['b', 2]],
    'mixed': [1, 'a', None, True, 2.5],
    'matrix': [[1, 2], [3, [4, 5]]],
    'unicode': 'héllo wörld',
    'items': [{'n': 'a', 'v': 1}, {'n': 'b', 'v': 5}],
    'vms': [
        {'id': 'vm1', 'status': 'ACTIVE', 'flavor': {'ram': 512}},
        {'id': 'vm2', 'status': 'ERROR', 'flavor': {'ram': 1024}},
        {'id': 'vm3', 'status': 'ACTIVE', 'flavor': {'ram': 2048}},
    ],
    'json_text': '{"a": [1, 2, {"b": null}], "c": "d"}',
    'yaml_text': 'a: 1\nb: [x, y]\nc: {d: true}\n',
    '__env': {'region': 'r1', 'debug': True},
    '__execution': {'id': 'ex-1'},
}

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_cases import JINJA_CASES, RENDER_CASES, YAQL_CASES  # noqa: E402
from golden_random import random_cases, random_jinja_cases, random_method_cases, random_template_cases  # noqa: E402


def build(cases, fn):
    out = []
    for c in cases:
        if isinstance(c, tuple):
            text, data = c
        else:
            text, data = c, DEFAULT
        out.append(run(fn, text, data))
    return out


def main():
    warnings.simplefilter('ignore')  # Python's SyntaxWarnings about generated code in random cases
    os.makedirs(OUT, exist_ok=True)
    files = {
        'yaql.json': build(YAQL_CASES, yaql_eval),
        'jinja.json': build(JINJA_CASES, jinja_eval),
        'render.json': build(RENDER_CASES, inline_yaql),
        'yaql-random.json': build(random_cases(1, 3000), yaql_eval),
        'yaql-random-methods.json': [c for c in build(random_method_cases(1, 3000), yaql_eval)
                                     if ' at 0x' not in json.dumps(c.get('result', '')).lower()],
        # Results that print a Python object address (a generator rendered into text) differ on
        # every run and are left out.
        'jinja-templates-random.json': build(random_template_cases(1, 2000), jinja_eval),
        'jinja-random.json': [c for c in build(random_jinja_cases(1, 3000), jinja_eval)
                              if ' at 0x' not in json.dumps(c.get('result', '')).lower()],
    }
    for name, cases in files.items():
        doc = {'generator': 'libs/expressions/tools/gen-golden.py', 'defaultContext': DEFAULT, 'cases': cases}
        with open(os.path.join(OUT, name), 'w') as fh:
            json.dump(doc, fh, indent=1, ensure_ascii=False, sort_keys=False)
            fh.write('\n')
        errors = sum(1 for c in cases if 'error' in c)
        print('%s: %d cases (%d errors)' % (name, len(cases), errors))


if __name__ == '__main__':
    main()
