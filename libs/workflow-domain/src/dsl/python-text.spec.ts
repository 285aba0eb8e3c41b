import { pyJsonDumps, pyRepr, pyStr } from './python-text';

describe('Python text forms', () => {
  it.each<[unknown, string]>([
    [null, 'None'],
    [true, 'True'],
    [false, 'False'],
    [3, '3'],
    [-1.5, '-1.5'],
    [1.5e-7, '1.5e-07'],
    [123456.789, '123456.789'],
    ['text', 'text'],
    [[1, 'a', null], "[1, 'a', None]"],
    [{ k: 'v', n: true }, "{'k': 'v', 'n': True}"],
    [{ nested: { list: [{}] } }, "{'nested': {'list': [{}]}}"],
    [["it's"], '["it\'s"]'],
    [['both \' and "'], "['both \\' and \"']"],
    [['line\nbreak'], "['line\\nbreak']"],
    [Infinity, 'inf'],
    [NaN, 'nan'],
  ])('str(%j)', (value, expected) => {
    expect(pyStr(value)).toBe(expected);
  });

  it('repr quotes strings', () => {
    expect(pyRepr('a')).toBe("'a'");
    expect(pyRepr('back\\slash')).toBe("'back\\\\slash'");
  });

  it.each<[unknown, string]>([
    [null, 'null'],
    [0, '0'],
    ['GET', '"GET"'],
    ['', '""'],
    ['é', '"\\u00e9"'],
    ['a\u{1F600}\n', '"a\\ud83d\\ude00\\n"'],
    ['say "hi"', '"say \\"hi\\""'],
    [[1, [2]], '[1, [2]]'],
    [{ a: 1, b: [true] }, '{"a": 1, "b": [true]}'],
  ])('json.dumps(%j)', (value, expected) => {
    expect(pyJsonDumps(value)).toBe(expected);
  });
});
