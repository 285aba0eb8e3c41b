/**
 * Python's textual forms of JSON-like values, as Mistral shows them: `str()` (display strings such as a
 * workflow's `input`), `repr()` (inside containers) and `json.dumps()` with its default separators and
 * `ensure_ascii` (an action's `input` string). Integral floats read from YAML are plain JS numbers, so
 * `2.0` prints as `2` here (the int/float distinction does not survive JSON storage either).
 */

import { pyJsonString } from '@osc/expressions';

const pyFloat = (x: number): string => {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  const [mantissa = '0', expText = '0'] = x.toExponential().split('e');
  const exp = Number(expText);
  if (exp < -4 || exp >= 16) {
    const sign = exp < 0 ? '-' : '+';
    return `${mantissa}e${sign}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  return String(x);
};

const pyNumber = (x: number): string => (Number.isInteger(x) ? String(x) : pyFloat(x));

const escapeChar = (ch: string): string => {
  const code = ch.codePointAt(0) ?? 0;
  if (ch === '\\') return '\\\\';
  if (ch === '\n') return '\\n';
  if (ch === '\r') return '\\r';
  if (ch === '\t') return '\\t';
  if (code < 0x20 || code === 0x7f) return `\\x${code.toString(16).padStart(2, '0')}`;
  return ch;
};

/** Python `repr()` of a string: single quotes unless the text has `'` and no `"`. */
export const pyReprString = (s: string): string => {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = '';
  for (const ch of s) out += ch === quote ? `\\${ch}` : escapeChar(ch);
  return `${quote}${out}${quote}`;
};

/** Python `repr()` of a JSON-like value (`None`, `True`, `'text'`, `[1, 'a']`, `{'k': 'v'}`). */
/**
 * Python `repr()` of a JSON-like value (`None`, `True`, `'text'`, `[1, 'a']`, `{'k': 'v'}`).
 * `isFloat(path)` tells which integral numbers were floats in the source (`2.0` prints as `2.0`).
 */
export const pyRepr = (
  value: unknown,
  isFloat?: (path: readonly (string | number)[]) => boolean,
  path: readonly (string | number)[] = [],
): string => {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') {
    if (Number.isInteger(value) && Number.isFinite(value) && isFloat?.(path)) {
      const text = pyFloat(value);
      return /[.e]/.test(text) ? text : `${text}.0`;
    }
    return pyNumber(value);
  }
  if (typeof value === 'string') return pyReprString(value);
  if (Array.isArray(value)) return `[${value.map((v, i) => pyRepr(v, isFloat, [...path, i])).join(', ')}]`;
  if (typeof value === 'object') {
    const parts = Object.entries(value as Record<string, unknown>).map(
      ([k, v]) => `${pyReprString(k)}: ${pyRepr(v, isFloat, [...path, k])}`,
    );
    return `{${parts.join(', ')}}`;
  }
  return String(value);
};

/** Python `str()`: strings unchanged, everything else as {@link pyRepr}. */
export const pyStr = (value: unknown, isFloat?: (path: readonly (string | number)[]) => boolean): string =>
  typeof value === 'string' ? value : pyRepr(value, isFloat);

/** Python `json.dumps()` with default settings: `, ` and `: ` separators, ASCII only, `NaN`/`Infinity`. */
export const pyJsonDumps = (value: unknown): string => {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return 'NaN';
    if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity';
    return pyNumber(value);
  }
  if (typeof value === 'string') return pyJsonString(value);
  if (Array.isArray(value)) return `[${value.map(pyJsonDumps).join(', ')}]`;
  if (typeof value === 'object') {
    const parts = Object.entries(value as Record<string, unknown>).map(
      ([k, v]) => `${pyJsonString(k)}: ${pyJsonDumps(v)}`,
    );
    return `{${parts.join(', ')}}`;
  }
  return pyJsonString(String(value));
};
