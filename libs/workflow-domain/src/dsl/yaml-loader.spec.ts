import { DslValidationError } from './dsl-validation-error';
import { loadYaml } from './yaml-loader';

const scalar = (text: string): unknown => (loadYaml(`a: ${text}\n`).value as { a: unknown }).a;

describe('loadYaml reads scalars like PyYAML safe_load (observed on PyYAML 6)', () => {
  it.each<[string, unknown]>([
    ['yes', true],
    ['Yes', true],
    ['ON', true],
    ['off', false],
    ['No', false],
    ['y', 'y'],
    ['n', 'n'],
    ['true', true],
    ['FALSE', false],
    ['~', null],
    ['null', null],
    ['NULL', null],
    ['', null],
    ['1e3', '1e3'],
    ['1.0e+3', 1000],
    ['1.0e3', '1.0e3'],
    ['0x1F', 31],
    ['017', 15],
    ['09', '09'],
    ['08.5', 8.5],
    ['0o17', '0o17'],
    ['0b101', 5],
    ['1_000', 1000],
    ['1:30', 90],
    ['12:30:45', 45045],
    ['1,000', '1,000'],
    ['+1', 1],
    ['-7', -7],
    ['.5', 0.5],
    ['1.', 1],
    ['.inf', Infinity],
    ['-.Inf', -Infinity],
    ['2024-01-31', '2024-01-31'],
    ['2024-01-31 10:00:00', '2024-01-31 10:00:00'],
    ["'2.0'", '2.0'],
    ['"yes"', 'yes'],
    ['!!str 1', '1'],
    ['@home', '@home'],
    ['<% $.x %>', '<% $.x %>'],
  ])('%s', (text, expected) => {
    expect(scalar(text)).toEqual(expected);
  });

  it('reads .nan as NaN', () => {
    expect(scalar('.nan')).toBeNaN();
  });

  it('applies merge keys', () => {
    expect(loadYaml('<<: {a: 1}\nb: 2\n').value).toEqual({ a: 1, b: 2 });
  });

  it('turns a Python-falsy document into an empty map', () => {
    for (const text of ['', '# only a comment\n', '~\n', '[]\n', 'false\n', '0\n', "''\n"])
      expect(loadYaml(text).value).toEqual({});
  });

  it('keeps key and value positions', () => {
    const { positions } = loadYaml('top:\n  key: value\n  list:\n    - x\n');
    expect(positions.at(['top', 'key'], 'key')).toEqual({ line: 2, column: 3 });
    expect(positions.at(['top', 'key'], 'value')).toEqual({ line: 2, column: 8 });
    expect(positions.at(['top', 'list', 0])).toEqual({ line: 4, column: 7 });
    expect(positions.at(['top', 'missing', 'deeper'])).toEqual({ line: 2, column: 3 });
  });

  it('marks boolean and null keys', () => {
    const { positions, value } = loadYaml('on: 1\n~: 2\nname: 3\n');
    expect(value).toEqual({ true: 1, '': 2, name: 3 });
    expect(positions.isNonStringKey(['true'])).toBe(true);
    expect(positions.isNonStringKey([''])).toBe(true);
    expect(positions.isNonStringKey(['name'])).toBe(false);
  });

  it.each([
    ['a: [1, 2\n'],
    ['a: "x\n'],
    ['a: !!binary aGk=\n'],
    ['a: !custom 1\n'],
    ['a: =\n'],
    ['a: %x\n'],
    ['a: 1\n---\nb: 2\n'],
    ['a:\n  b: 1\n c: 2\n'],
  ])('rejects %j with a syntax issue and a position', (text) => {
    try {
      loadYaml(text);
      throw new Error('no error');
    } catch (e) {
      expect(e).toBeInstanceOf(DslValidationError);
      const [issue] = (e as DslValidationError).issues;
      expect(issue!.kind).toBe('syntax');
      expect(issue!.line).toBeGreaterThanOrEqual(1);
      expect((e as Error).message).toMatch(/^Definition could not be parsed: /);
    }
  });

  it('bounds alias expansion', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (const [i, name] of ['b', 'c', 'd', 'e'].entries()) {
      const prev = ['a', 'b', 'c', 'd'][i];
      bomb.push(`${name}: &${name} [${Array(10).fill(`*${prev}`).join(', ')}]`);
    }
    expect(() => loadYaml(bomb.join('\n'))).toThrow(DslValidationError);
  });
});
