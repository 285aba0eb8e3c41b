#!/usr/bin/python3
"""PyYAML's refusals of malformed documents: libs/expressions/test/golden/yaml-errors.json.

Run with the Debian interpreter (python3-yaml, python3-yaql, python3-jinja2 installed):
    /usr/bin/python3 libs/expressions/tools/gen-yaml-errors.py

Documents are stitched from YAML fragments (indicators, indentation, quotes, block scalars,
directives, tags, anchors, control characters) at random from a fixed seed, mostly malformed, and
loaded with Mistral's loader (mistral.utils.safe_yaml: anchors, aliases and '@' start plain text;
gen-registry.py's _SafeLoader). Each case records the reader's, scanner's, parser's or composer's
refusal as PyYAML words it, or null when PyYAML reads the document (or refuses it only while
constructing values, which src/pyyaml-refusal.ts does not model). The generator is deterministic.
"""
import importlib.util
import json
import os
import random

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, '..', 'test', 'golden', 'yaml-errors.json')
_spec = importlib.util.spec_from_file_location('gen_registry', os.path.join(HERE, 'gen-registry.py'))
gen_registry = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen_registry)

PIECES = [
    '\n- a\n  b: 2', 'x:\n  - 1\n - 2', 'a:\n  b: 1\n c: 2', '\n\n', '%TAG !a! tag:x,1:', '%FOO bar', '\x07',
    '"\\x4"', '\u2028', '\r\n', '\ufeff', '\u00e9', '|2\n  x\n y', ' # c\n', '? a\n: b', '[a: b]', '{? x}', '- - a',
    'k:\n- 1', 'a', 'b: 1', 'k: v', '- x', '- ', '[', ']', '{', '}', ', ', ': ', '? ', '"q"', "'s'", '"bad\\q"',
    '#c', ' ', '  ', '\n', '\n  ', '\n    ', '&x', '*x', '@y', '!t ', '!!str ', '|', '>', '|-', '|0', '---', '...',
    '%YAML 1.1', '\t', 'x: y: z', '"open', "'open", 'a b', '-1', '!<x> ', '!a!b ', '[a, b]', '{a: 1}', '1.5',
    'null', '~', 'long ' * 10,
]
ERRORS = (yaml.reader.ReaderError, yaml.scanner.ScannerError, yaml.parser.ParserError,
          yaml.composer.ComposerError)


def main():
    rnd = random.Random(20261126)
    cases = []
    seen = set()
    while len(cases) < 2500:
        doc = ''.join(rnd.choice(PIECES) for _ in range(rnd.randint(1, 8)))
        if doc in seen:
            continue
        seen.add(doc)
        try:
            yaml.load(doc, Loader=gen_registry._SafeLoader)
            error = None
        except ERRORS as e:
            error = '%s: %s' % (type(e).__name__, e)
        except Exception:  # refused while constructing: not modelled
            error = None
        cases.append({'doc': doc, 'error': error})
    with open(OUT, 'w', encoding='utf-8') as f:
        json.dump({'cases': cases}, f, indent=1, ensure_ascii=False)
        f.write('\n')
    refused = sum(1 for c in cases if c['error'])
    print('yaml-errors.json: %d documents, %d refused' % (len(cases), refused))


if __name__ == '__main__':
    main()
