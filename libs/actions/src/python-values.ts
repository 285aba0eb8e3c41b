import { pyStr } from '@osc/workflow-domain';

/** Python truthiness of a JSON value (false for null, false, 0, "", [] and {}). */
export const isTruthy = (value: unknown): boolean => {
  if (value === null || value === undefined || value === false || value === 0 || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
};

/**
 * Python's `float(value)`: numbers, booleans and numeric strings convert; other strings give
 * `undefined` (Python's ValueError), as do null, lists and maps (TypeError).
 */
export const pyFloat = (value: unknown): number | undefined => {
  if (typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string') {
    const s = value.trim().toLowerCase();
    if (/^[+-]?(\d+\.?\d*(e[+-]?\d+)?|\.\d+(e[+-]?\d+)?)$/.test(s.replace(/_/g, '')))
      return Number(s.replace(/_/g, ''));
    if (/^[+-]?(inf|infinity)$/.test(s)) return s.startsWith('-') ? -Infinity : Infinity;
    return undefined;
  }
  return undefined;
};

/** Python's `int(value)`: numbers truncate, integer strings convert; float strings give `undefined`. */
export const pyInt = (value: unknown): number | undefined => {
  if (typeof value === 'number') return Number.isFinite(value) ? Math.trunc(value) : undefined;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string') {
    const s = value.trim().replace(/_/g, '');
    return /^[+-]?\d+$/.test(s) ? Number(s) : undefined;
  }
  return undefined;
};

/** Python's `'%s' % value` for a JSON value. */
export const pyFormat = (value: unknown): string => pyStr(value);
