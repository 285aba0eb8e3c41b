#!/usr/bin/python3
"""yaml_dump's reference outputs: libs/expressions/test/golden/yaml-dump.json.

Run with the Debian interpreter (python3-yaml installed):
    /usr/bin/python3 libs/expressions/tools/gen-yaml-dump.py

Mistral's yaml_dump is yaml.dump(data, Dumper=yaml.SafeDumper, default_flow_style=False). Values
are drawn from a fixed seed: every string of up to three characters over a number-like alphabet
(for the YAML 1.1 implicit types), words and timestamps, short strings of indicators, quotes,
control and non-ASCII characters (plain / single / double quoting), long texts (folding at 80
columns) placed at several depths and as keys, and random nested collections. The generator is
deterministic.

A value is encoded for JSON as: str, int, bool and null as themselves; a float as
{"float": repr}; a dict as {"map": [[key, value], ...]} (insertion order, any key type); a list as
a list; an aware datetime as {"datetime": [utc microseconds, offset microseconds]}.
"""
import datetime
import itertools
import json
import os
import random

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, '..', 'test', 'golden', 'yaml-dump.json')
rng = random.Random(20261127)
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def dump(value):
    return yaml.dump(value, Dumper=yaml.SafeDumper, default_flow_style=False)


def encode(value):
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return {'float': repr(value)}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {'map': [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, datetime.datetime):
        delta = value - EPOCH
        offset = value.utcoffset()
        return {'datetime': [delta // datetime.timedelta(microseconds=1), offset // datetime.timedelta(microseconds=1)]}
    raise TypeError(value)


def short_strings():
    alphabet = '0178._-+eE:xb'
    for n in range(1, 4):
        for chars in itertools.product(alphabet, repeat=n):
            yield ''.join(chars)
    words = ['yes', 'no', 'true', 'false', 'on', 'off', 'y', 'n', 'null', '~', 'inf', 'nan', '<<', '=']
    for w in words:
        for form in sorted({w, w.upper(), w.capitalize(), w[0] + w[1:].upper(), '.' + w, '-.' + w, '+.' + w}):
            yield form
    for _ in range(600):
        yield ''.join(rng.choice('0123456789._-+eE:xXbBoaAfF') for _ in range(rng.randint(1, 9)))
    for _ in range(300):
        date = '%04d-%s-%s' % (rng.randint(0, 9999), rng.choice(['1', '01', '12', '123']), rng.choice(['1', '09', '31']))
        time = rng.choice(['', 'T1:02:03', 't01:02:03.5', ' 01:02:03', '  1:02:3', 'T01:02:03.', ' 01:02:03Z'])
        zone = rng.choice(['', 'Z', ' Z', '+1', '-05:00', '+1:0', ' -5', 'x']) if time else ''
        yield date + time + zone


PIECES = ['a', 'b', 'ab', ' ', '  ', "'", '"', '\\', '#', ':', '-', '?', ',', '[', ']', '{', '}', '&', '*', '!',
          '|', '>', '%', '@', '`', '\n', '\t', '\r', '\xe9', '\u2603', '\U0001f600', '\x00', '\x07', '\x1b',
          '\x7f', '\x85', '\xa0', '\u2028', '\u2029', '\ufeff', '.', '~', '=', '---', '...', '1', 'x: y', ' #']


def odd_strings(count, longest):
    for _ in range(count):
        yield ''.join(rng.choice(PIECES) for _ in range(rng.randint(1, longest)))


def long_texts(count):
    for _ in range(count):
        words = []
        special = rng.random()
        for _ in range(rng.randint(5, 70)):
            word = ''.join(rng.choice('abcdefgh') for _ in range(rng.randint(1, 14)))
            r = rng.random()
            if special < 0.4 and r < 0.08:
                word += rng.choice(["'", '\n', '\n\n', '#', '"'])
            elif special > 0.7 and r < 0.15:
                word += rng.choice(['\xe9', '\\', '\t', '\xe9\xe9\xe9', '"', '\n '])
            words.append(word)
            words.append(rng.choice([' '] * 8 + ['  ', '\n'] if special < 0.4 else [' '] * 9 + ['  ']))
        text = ''.join(words)
        yield rng.choice([text, text.strip(), ' ' + text, '\xe9' * rng.randint(0, 30) + text])


def place(value, depth):
    """Puts a value under `depth` random levels of lists and dicts."""
    for _ in range(depth):
        r = rng.random()
        if r < 0.35:
            value = [value] if rng.random() < 0.5 else [1, value]
        elif r < 0.7:
            value = {rng.choice(['k', 'key', 'a b']): value}
        else:
            value = {rng.choice(['', 'x' * 130, 'multi\nline', '\xe9']): value}
    return value


def scalar():
    return rng.choice([
        None, True, False, 0, -5, 12345678901234567890 // 10 ** 4, 1.5, -0.25, 1e-7, 1e16, 2.0, float('inf'),
        float('-inf'), float('nan'), '', 'x', 'yes', '010', 'a b', 'c: d', '- e', "it's", 'multi\nline', '\xe9',
        datetime.datetime(2020, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc),
        datetime.datetime(2020, 1, 2, 3, 4, 5, 6, tzinfo=datetime.timezone(datetime.timedelta(hours=-5, minutes=-30))),
    ])


def structure(depth):
    r = rng.random()
    if depth <= 0 or r < 0.3:
        return scalar()
    if r < 0.6:
        return [structure(depth - 1) for _ in range(rng.randint(0, 3))]
    keys = rng.choice([
        ['a', 'b', 'c', 'k', 'z', 'a b', '', 'yes', '1'],
        [1, 2, 3.5, -1],
        [None, True, 'x'],
        [1, 'x'],
    ])
    return {rng.choice(keys): structure(depth - 1) for _ in range(rng.randint(0, 4))}


def values():
    for s in short_strings():
        yield s
    for s in odd_strings(1500, 6):
        yield rng.choice([s, [s], {'k': s}, {s: 1}])
    for s in long_texts(450):
        yield place(s, rng.randint(0, 4))
    for s in odd_strings(200, 40):
        yield place(s, rng.randint(0, 3))
    for n in (120, 121, 122, 123, 124):
        yield {'a' * n: 1}
        yield {'\xe9' * n: 1}
    for _ in range(500):
        yield structure(rng.randint(1, 5))


def main():
    cases, seen = [], set()
    for value in values():
        encoded = encode(value)
        key = json.dumps(encoded)
        if key in seen:
            continue
        seen.add(key)
        cases.append({'value': encoded, 'yaml': dump(value)})
    with open(OUT, 'w', encoding='utf-8') as f:
        # one case a line, so that a regenerated file diffs case by case
        f.write('{"generator": "libs/expressions/tools/gen-yaml-dump.py", "pyyaml": %s, "cases": [\n' % json.dumps(yaml.__version__))
        f.write(',\n'.join(json.dumps(c, ensure_ascii=False) for c in cases))
        f.write('\n]}\n')
    print(len(cases), 'cases')


if __name__ == '__main__':
    main()
