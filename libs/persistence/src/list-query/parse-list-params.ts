import { InternalError, InvalidInputError } from '@osc/errors';
import {
  DEFAULT_MAX_LIMIT,
  FILTER_OPS,
  type FieldFilter,
  type FilterOp,
  type FilterValue,
  type ListField,
  type ListFilter,
  type ListQuery,
  type ListSpec,
  SORT_DIRS,
  type SortDir,
  type SortKey,
} from './list-query.types';

/**
 * Wire conventions: `mistral` (sort_keys/sort_dirs, fields, `field=<op>:<value>`, `nulls`) or
 * `cinder` (sort=k:dir / sort_key+sort_dir, offset, with_count, `k~` LIKE filters, time filters).
 */
export type ListDialect = 'mistral' | 'cinder';

/** Query parameters as the HTTP layer received them (a repeated parameter: the last value wins). */
export type ListParams = Readonly<Record<string, string | readonly string[] | undefined>>;

export interface ParseListOptions {
  /** Parameters the caller handles itself (e.g. `all_projects`, `include_output`, `metadata`). */
  readonly passthrough?: readonly string[];
  /** A parameter that is neither a list parameter, a filterable field nor passthrough. Default `reject`. */
  readonly unknownFilters?: 'reject' | 'ignore';
}

const MISTRAL_RESERVED = ['marker', 'limit', 'sort_keys', 'sort_dirs', 'fields', 'nulls'];
const CINDER_RESERVED = ['marker', 'limit', 'offset', 'sort', 'sort_key', 'sort_dir', 'with_count'];
const TRUE_WORDS = ['true', '1', 't', 'yes', 'y', 'on'];
const FALSE_WORDS = ['false', '0', 'f', 'no', 'n', 'off'];
const TIME_OPS: readonly FilterOp[] = ['gt', 'gte', 'eq', 'neq', 'lt', 'lte'];

/**
 * Turns list query parameters into a {@link ListQuery}, validating every name against `spec`.
 * Throws InvalidInputError with the upstream service's message for bad input.
 *
 * Mistral: `limit` > 0 (`Limit must be positive.`), default and cap `maxLimit`; `sort_keys`
 * (default: the spec's) with `sort_dirs` padded with `asc`; list values are trimmed and
 * lower-cased; `id` is appended ascending as tie-breaker; `fields` always includes `id`.
 * Cinder: `limit` ≥ 0 (0 = empty page), `offset` ≥ 0; `sort=k1[:dir],k2` (default dir `desc`) or
 * `sort_key`/`sort_dir`, not both; `created_at` then `id` appended with the first key's direction.
 * Unknown sort keys and filter fields are 400s (Mistral itself answers 500 for sort keys).
 */
export function parseListParams(
  dialect: ListDialect,
  params: ListParams,
  spec: ListSpec,
  options: ParseListOptions = {},
): ListQuery {
  const idField = spec.idField ?? 'id';
  if (!spec.fields[idField]?.property) {
    throw new InternalError(`List spec of ${spec.resource} has no stored id field ${idField}`);
  }
  const maxLimit = spec.maxLimit ?? DEFAULT_MAX_LIMIT;
  const get = (name: string): string | undefined => {
    const v = params[name];
    return typeof v === 'string' ? v : v?.[v.length - 1];
  };
  const marker = get('marker')?.trim() || undefined;
  const reserved = dialect === 'mistral' ? MISTRAL_RESERVED : CINDER_RESERVED;
  const skip = new Set([...reserved, ...(options.passthrough ?? [])]);
  const filterNames = Object.keys(params).filter((k) => !skip.has(k) && params[k] !== undefined);
  const filters: ListFilter[] = [];
  const unknown: string[] = [];

  if (dialect === 'mistral') {
    const limit = parseMistralLimit(get('limit'), spec.defaultLimit ?? maxLimit, maxLimit);
    const sort = parseMistralSort(get('sort_keys'), get('sort_dirs'), spec, idField);
    const fields = parseMistralFields(get('fields'), spec, idField);
    for (const name of commaList(get('nulls'), true)) {
      const field = filterableField(spec, name);
      if (!field) unknown.push(name);
      else filters.push({ field: name, op: 'eq', value: null, raw: '' });
    }
    for (const name of filterNames) {
      const field = filterableField(spec, name);
      if (!field) {
        unknown.push(name);
        continue;
      }
      filters.push(parseMistralFilter(name, field, get(name) ?? ''));
    }
    rejectUnknown(unknown, options, (names) => `Filter field is invalid: ${names.join(', ')}`);
    return {
      sort,
      limit,
      ...(marker ? { marker } : {}),
      offset: 0,
      ...(fields ? { fields } : {}),
      filters,
      withCount: false,
    };
  }

  const limit = parseCinderInteger('limit', get('limit')) ?? spec.defaultLimit ?? maxLimit;
  const offset = parseCinderInteger('offset', get('offset')) ?? 0;
  const sort = parseCinderSort(get('sort'), get('sort_key'), get('sort_dir'), spec, idField);
  const withCount = parseBoolean(get('with_count') ?? 'false') ?? false;
  for (const name of filterNames) {
    const like = name.endsWith('~');
    const fieldName = like ? name.slice(0, -1) : name;
    const field = filterableField(spec, fieldName);
    if (!field) {
      unknown.push(name);
      continue;
    }
    const raw = get(name) ?? '';
    filters.push(
      like ? { field: fieldName, op: 'has', value: raw, raw } : parseCinderFilter(fieldName, field, raw),
    );
  }
  rejectUnknown(
    unknown,
    options,
    (names) => `Invalid filters ${names.join(',')} are found in query options.`,
  );
  return {
    sort,
    limit: Math.min(limit, maxLimit),
    ...(marker ? { marker } : {}),
    offset,
    filters,
    withCount,
  };
}

function filterableField(spec: ListSpec, name: string): ListField | undefined {
  if (!Object.prototype.hasOwnProperty.call(spec.fields, name)) return undefined;
  const field = spec.fields[name];
  return field?.filterable && field.property ? field : undefined;
}

function rejectUnknown(
  unknown: string[],
  options: ParseListOptions,
  message: (names: string[]) => string,
): void {
  if (unknown.length > 0 && (options.unknownFilters ?? 'reject') === 'reject') {
    throw new InvalidInputError(message(unknown));
  }
}

function commaList(raw: string | undefined, lower: boolean): string[] {
  if (raw === undefined) return [];
  return raw
    .split(',')
    .map((s) => (lower ? s.trim().toLowerCase() : s.trim()))
    .filter((s) => s.length > 0);
}

function parseMistralLimit(raw: string | undefined, byDefault: number, max: number): number {
  if (raw === undefined || raw.trim() === '') return Math.min(byDefault, max);
  if (!/^\s*[+-]?\d+\s*$/.test(raw)) {
    throw new InvalidInputError(
      `Invalid input for field/attribute limit. Value: '${raw}'. unable to convert to int`,
    );
  }
  const n = Number(raw);
  if (n <= 0) throw new InvalidInputError('Limit must be positive.');
  return Math.min(n, max);
}

function parseCinderInteger(name: 'limit' | 'offset', raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\s*[+-]?\d+\s*$/.test(raw)) throw new InvalidInputError(`${name} param must be an integer`);
  const n = Number(raw);
  if (n < 0) throw new InvalidInputError(`${name} param must be positive`);
  return n;
}

function isSortDir(dir: string): dir is SortDir {
  return (SORT_DIRS as readonly string[]).includes(dir);
}

function checkSortKey(spec: ListSpec, key: string, message: string): void {
  const field = Object.prototype.hasOwnProperty.call(spec.fields, key) ? spec.fields[key] : undefined;
  if (!field?.sortable || !field.property) throw new InvalidInputError(message);
}

function withTieBreakers(keys: SortKey[], tieBreakers: readonly string[], dir: SortDir): SortKey[] {
  const seen = new Set<string>();
  const out: SortKey[] = [];
  for (const k of [...keys, ...tieBreakers.map((key) => ({ key, dir }))]) {
    if (seen.has(k.key)) continue;
    seen.add(k.key);
    out.push(k);
  }
  return out;
}

function parseMistralSort(
  rawKeys: string | undefined,
  rawDirs: string | undefined,
  spec: ListSpec,
  idField: string,
): SortKey[] {
  const keys = commaList(rawKeys, true);
  const dirs = commaList(rawDirs, true);
  const useKeys = keys.length > 0 ? keys : spec.defaultSort.map((s) => s.key);
  const useDirs = dirs.length > 0 || keys.length > 0 ? dirs : spec.defaultSort.map((s) => s.dir as string);
  if (useDirs.length > useKeys.length) {
    throw new InvalidInputError('Length of sort_keys must be equal or greater than sort_dirs.');
  }
  for (const dir of useDirs) {
    if (!isSortDir(dir)) throw new InvalidInputError("Unknown sort direction, must be 'desc' or 'asc'.");
  }
  for (const key of useKeys) checkSortKey(spec, key, `Sort key supplied is invalid: ${key}`);
  const sort = useKeys.map((key, i) => ({ key, dir: (useDirs[i] ?? 'asc') as SortDir }));
  return withTieBreakers(sort, [idField], 'asc');
}

function parseCinderSort(
  rawSort: string | undefined,
  rawKey: string | undefined,
  rawDir: string | undefined,
  spec: ListSpec,
  idField: string,
): SortKey[] {
  if (rawSort !== undefined && (rawKey !== undefined || rawDir !== undefined)) {
    throw new InvalidInputError(
      "The 'sort_key' and 'sort_dir' parameters are deprecated and cannot be used with the 'sort' parameter.",
    );
  }
  let pairs: [string, string][];
  if (rawSort !== undefined) {
    pairs = commaList(rawSort, false).map((part) => {
      const [key = '', dir] = part.split(':');
      return [key.trim(), (dir ?? 'desc').trim().toLowerCase()];
    });
  } else if (rawKey !== undefined || rawDir !== undefined) {
    const keys = commaList(rawKey, false);
    const dirs = commaList(rawDir, true);
    const useKeys = keys.length > 0 ? keys : spec.defaultSort.map((s) => s.key);
    pairs = useKeys.map((k, i) => [k, dirs[i] ?? dirs[0] ?? 'desc']);
  } else {
    pairs = [];
  }
  if (pairs.length === 0) pairs = spec.defaultSort.map((s) => [s.key, s.dir]);
  for (const [, dir] of pairs) {
    if (!isSortDir(dir)) {
      throw new InvalidInputError("Invalid input received: Unknown sort direction, must be 'desc' or 'asc'");
    }
  }
  for (const [key] of pairs) checkSortKey(spec, key, `Invalid input received: Invalid sort key ${key}`);
  const sort = pairs.map(([key, dir]) => ({ key, dir: dir as SortDir }));
  const createdAt = spec.fields['created_at']?.sortable ? ['created_at'] : [];
  return withTieBreakers(sort, [...createdAt, idField], sort[0]?.dir ?? 'desc');
}

function parseMistralFields(raw: string | undefined, spec: ListSpec, idField: string): string[] | undefined {
  const names = commaList(raw, true);
  if (names.length === 0) return undefined;
  const known = Object.keys(spec.fields);
  const bad = names.filter((n) => !known.includes(n));
  if (bad.length > 0) {
    throw new InvalidInputError(
      `Some fields do not exist  [${bad.join(', ')}], please choose from [${known.join(', ')}]`,
    );
  }
  return [idField, ...new Set(names.filter((n) => n !== idField))];
}

function parseMistralFilter(name: string, field: ListField, rawParam: string): FieldFilter {
  let op: FilterOp = 'eq';
  let raw = rawParam;
  for (const candidate of FILTER_OPS) {
    if (rawParam.startsWith(`${candidate}:`)) {
      op = candidate;
      raw = rawParam.slice(candidate.length + 1);
      break;
    }
  }
  const invalid = (): InvalidInputError =>
    new InvalidInputError(`Invalid value for filter ${name}: '${rawParam}'`);
  return typedFilter(name, field, op, raw, invalid);
}

function parseCinderFilter(name: string, field: ListField, raw: string): ListFilter {
  const invalid = (): InvalidInputError =>
    new InvalidInputError(`Invalid input received: '${name} = ${raw}'`);
  if ((field.type ?? 'string') === 'datetime' && /^[a-z]+:/.test(raw)) {
    // Cinder 3.60: `created_at=gt:<time>,lt:<time>`; several conditions are OR-ed (Cinder's behaviour).
    const anyOf = raw.split(',').map((part) => {
      const colon = part.indexOf(':');
      const op = part.slice(0, colon).trim();
      const value = part.slice(colon + 1).trim();
      if (colon < 0 || !(TIME_OPS as readonly string[]).includes(op)) {
        throw new InvalidInputError(`Invalid ${colon < 0 ? part : op} operator`);
      }
      const time = parseDatetime(value);
      if (!time) throw new InvalidInputError(`Invalid ${value} value`);
      return { field: name, op: op as FilterOp, value: time, raw: value };
    });
    return anyOf.length === 1 ? anyOf[0]! : { anyOf };
  }
  return typedFilter(name, field, 'eq', raw, invalid);
}

function typedFilter(
  name: string,
  field: ListField,
  op: FilterOp,
  raw: string,
  invalid: () => InvalidInputError,
): FieldFilter {
  const type = field.type ?? 'string';
  if (op === 'has') return { field: name, op, value: raw, raw };
  if ((type === 'json' || type === 'tags') && op !== 'eq' && op !== 'neq') {
    throw new InvalidInputError(`Filter ${name} supports only the eq and neq operators`);
  }
  if (type === 'tags') return { field: name, op, value: commaList(raw, false), raw };
  if (op === 'in' || op === 'nin') {
    const values = raw.split(',').map((v) => convert(type, v.trim(), invalid));
    return { field: name, op, value: values, raw };
  }
  return { field: name, op, value: convert(type, raw, invalid), raw };
}

function convert(
  type: NonNullable<ListField['type']>,
  raw: string,
  invalid: () => InvalidInputError,
): FilterValue {
  switch (type) {
    case 'string':
    case 'uuid':
      return raw;
    case 'integer':
      if (!/^\s*[+-]?\d+\s*$/.test(raw)) throw invalid();
      return Number(raw);
    case 'number': {
      const n = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(n)) throw invalid();
      return n;
    }
    case 'boolean': {
      const b = parseBoolean(raw);
      if (b === undefined) throw invalid();
      return b;
    }
    case 'datetime': {
      const d = parseDatetime(raw);
      if (!d) throw invalid();
      return d;
    }
    case 'json':
      try {
        return JSON.parse(raw) as unknown;
      } catch {
        throw invalid();
      }
    case 'tags':
      return commaList(raw, false);
  }
}

function parseBoolean(raw: string): boolean | undefined {
  const v = raw.trim().toLowerCase();
  if (TRUE_WORDS.includes(v)) return true;
  if (FALSE_WORDS.includes(v)) return false;
  return undefined;
}

const DATETIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,6})?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i;

/** `YYYY-MM-DD[( |T)HH:MM[:SS[.ffffff]]][Z|±HH:MM]`; without a zone the time is UTC (as stored). */
export function parseDatetime(raw: string): Date | undefined {
  const m = DATETIME.exec(raw.trim());
  if (!m) return undefined;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone] = m;
  const z =
    !zone || zone.toUpperCase() === 'Z'
      ? 'Z'
      : zone.length === 5
        ? `${zone.slice(0, 3)}:${zone.slice(3)}`
        : zone;
  const ms = frac ? `.${frac.slice(1, 4).padEnd(3, '0')}` : '';
  const date = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}${ms}${z}`);
  if (Number.isNaN(date.getTime())) return undefined;
  // Reject calendar overflow (2024-02-31) that Date would silently roll over.
  if (z === 'Z' && date.getUTCDate() !== Number(d)) return undefined;
  return date;
}
