import {
  type Document,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  type Node as YamlNode,
  parseDocument,
  type ScalarTag,
  type Tags,
  type YAMLError,
} from 'yaml';
import { type DslIssue, DslValidationError } from './dsl-validation-error';

/** A step of a path into a parsed document: a map key or a list index. */
export type PathSegment = string | number;

/** 1-based line and column. */
export interface SourcePos {
  readonly line: number;
  readonly column: number;
}

const pathKey = (path: readonly PathSegment[]): string => JSON.stringify(path);

/**
 * Where every map key and value of the parsed document starts in the source text. Lookups fall back to the
 * nearest ancestor, so a position is known for any path inside the document (aliased subtrees included).
 */
export class SourcePositions {
  private readonly entries = new Map<string, { key?: SourcePos; value?: SourcePos }>();
  private readonly nonStringKeys = new Set<string>();
  private readonly integralFloats = new Set<string>();

  markIntegralFloat(path: readonly PathSegment[]): void {
    this.integralFloats.add(pathKey(path));
  }

  /** True when the scalar at `path` was written as a float with an integral value (`1.0`, `2.`). */
  isIntegralFloat(path: readonly PathSegment[]): boolean {
    return this.integralFloats.has(pathKey(path));
  }

  record(path: readonly PathSegment[], which: 'key' | 'value', pos: SourcePos): void {
    const k = pathKey(path);
    const entry = this.entries.get(k) ?? {};
    entry[which] = pos;
    this.entries.set(k, entry);
  }

  markNonStringKey(path: readonly PathSegment[]): void {
    this.nonStringKeys.add(pathKey(path));
  }

  /**
   * True when the map key at `path` was a YAML 1.1 boolean or null (`yes:`, `on:`, `~:`): PyYAML gives a
   * non-string key there, which Mistral rejects wherever a name is expected.
   */
  isNonStringKey(path: readonly PathSegment[]): boolean {
    return this.nonStringKeys.has(pathKey(path));
  }

  at(path: readonly PathSegment[], which: 'key' | 'value' = 'value'): SourcePos | undefined {
    for (let n = path.length; n >= 0; n--) {
      const entry = this.entries.get(pathKey(path.slice(0, n)));
      if (!entry) continue;
      const pos = n === path.length ? (entry[which] ?? entry.value ?? entry.key) : (entry.value ?? entry.key);
      if (pos) return pos;
    }
    return undefined;
  }
}

export interface LoadedYaml {
  /** Plain JSON-like data: maps are objects with string keys, sequences are arrays. */
  readonly value: unknown;
  readonly positions: SourcePositions;
}

// --- PyYAML (YAML 1.1) implicit resolvers, as used by Mistral's safe loader ------------------------------
// Only these scalars are typed; everything else is a string. Notably `y`/`n`, `1e3` and `0o17` stay strings,
// `017` is octal, `1_000` and `1:30` (base 60) are integers, `1.0e+3` is a float.

const BOOL_TRUE = /^(?:yes|Yes|YES|true|True|TRUE|on|On|ON)$/;
const BOOL = /^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$/;
const INT =
  /^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$/;
const FLOAT =
  /^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;
const NULL = /^(?:~|null|Null|NULL|)$/;
const TIMESTAMP =
  /^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$/;

const sexagesimal = (digits: string): number =>
  digits
    .split(':')
    .map(Number)
    .reduce((acc, d) => acc * 60 + d, 0);

const resolveInt = (source: string): number => {
  let s = source.replace(/_/g, '');
  let sign = 1;
  if (s[0] === '-' || s[0] === '+') {
    if (s[0] === '-') sign = -1;
    s = s.slice(1);
  }
  if (s === '0') return 0;
  if (s.startsWith('0b')) return sign * parseInt(s.slice(2), 2);
  if (s.startsWith('0x')) return sign * parseInt(s.slice(2), 16);
  if (s.startsWith('0')) return sign * parseInt(s, 8);
  if (s.includes(':')) return sign * sexagesimal(s);
  return sign * Number(s);
};

const resolveFloat = (source: string): number => {
  let s = source.replace(/_/g, '').toLowerCase();
  let sign = 1;
  if (s[0] === '-' || s[0] === '+') {
    if (s[0] === '-') sign = -1;
    s = s.slice(1);
  }
  if (s === '.inf') return sign * Infinity;
  if (s === '.nan') return NaN;
  if (s.includes(':')) {
    const [whole, frac = ''] = s.split('.');
    return sign * (sexagesimal(whole ?? '0') + Number(`0.${frac || '0'}`));
  }
  return sign * Number(s.endsWith('.') ? `${s}0` : s);
};

/** Scalar format that makes the dumper print an integral number as a float. */
export const PY_FLOAT_FORMAT = 'PY_FLOAT';

const PYYAML_SCALAR_TAGS: ScalarTag[] = [
  {
    tag: 'tag:yaml.org,2002:null',
    default: true,
    test: NULL,
    resolve: () => null,
    identify: (v) => v == null,
  },
  {
    tag: 'tag:yaml.org,2002:bool',
    default: true,
    test: BOOL,
    resolve: (s: string) => BOOL_TRUE.test(s),
    identify: (v) => typeof v === 'boolean',
  },
  {
    tag: 'tag:yaml.org,2002:int',
    default: true,
    test: INT,
    resolve: resolveInt,
    identify: (v) => typeof v === 'number' && Number.isInteger(v),
  },
  {
    tag: 'tag:yaml.org,2002:float',
    default: true,
    test: FLOAT,
    resolve: resolveFloat,
    identify: (v) => typeof v === 'number',
  },
  // Deliberate: PyYAML makes `2024-01-31` a date object, which has no JSON form; we keep the text as written
  // (what a JSON round trip of Mistral's stored spec shows for a date) so that definitions stay plain JSON.
  { tag: 'tag:yaml.org,2002:timestamp', default: true, test: TIMESTAMP, resolve: (s: string) => s },
  {
    // Dump only (never matches when parsing): a Scalar with this format prints an integral number as a
    // float (`2.0`), as PyYAML does for Python floats.
    tag: 'tag:yaml.org,2002:float',
    format: PY_FLOAT_FORMAT,
    default: true,
    test: /(?!)/,
    resolve: resolveFloat,
    identify: (v) => typeof v === 'number',
    stringify: ({ value }) =>
      typeof value === 'number' && Number.isInteger(value) ? value.toFixed(1) : String(value),
  },
  {
    // PyYAML resolves a lone `=` to the `value` tag, which its safe constructor rejects.
    tag: 'tag:yaml.org,2002:value',
    default: true,
    test: /^=$/,
    resolve: () => {
      throw new Error("could not determine a constructor for the tag 'tag:yaml.org,2002:value'");
    },
  },
];

const KEEP_DEFAULT_TAGS = new Set([
  'tag:yaml.org,2002:map',
  'tag:yaml.org,2002:seq',
  'tag:yaml.org,2002:str',
]);

/** Scalar typing of PyYAML's safe loader, for parsing and (so that quoting decisions agree) for dumping. */
export const customTags = (tags: Tags): Tags => [
  ...tags.filter((t) => typeof t !== 'string' && KEEP_DEFAULT_TAGS.has(t.tag)),
  ...PYYAML_SCALAR_TAGS,
];

/** Aliases expanded at most this many times (billion-laughs protection, DSL-1.1). */
export const MAX_ALIAS_COUNT = 100;

const firstLine = (message: string): string => {
  const cut = message.search(/ at line \d+, column \d+/);
  return (cut >= 0 ? message.slice(0, cut) : (message.split('\n')[0] ?? message)).trim();
};

const syntaxIssue = (e: YAMLError): DslIssue => {
  const pos = e.linePos?.[0];
  const message =
    e.code === 'TAG_RESOLVE_FAILED' && /^Unresolved tag: /.test(e.message)
      ? `could not determine a constructor for the tag '${firstLine(e.message).replace(/^Unresolved tag: /, '')}'`
      : firstLine(e.message);
  return { kind: 'syntax', path: '', message, ...(pos ? { line: pos.line, column: pos.col } : {}) };
};

/** Mistral's loader lets a plain scalar start with `@`; every other reserved start character stays an error. */
const isTolerated = (e: YAMLError): boolean =>
  e.code === 'BAD_SCALAR_START' && /reserved character @/.test(e.message);

const scalarKey = (key: unknown): { key: string; nonString: boolean } => {
  if (isScalar(key)) {
    const v = key.value;
    // Same text as yaml's toJS uses for the key (null becomes '').
    return { key: v === null ? '' : String(v), nonString: typeof v === 'boolean' || v === null };
  }
  if (key && typeof (key as YamlNode).toJSON === 'function') {
    return { key: JSON.stringify((key as YamlNode).toJSON()), nonString: true };
  }
  return { key: String(key), nonString: true };
};

const recordPositions = (
  node: unknown,
  path: PathSegment[],
  positions: SourcePositions,
  lines: LineCounter,
): void => {
  const posOf = (n: unknown): SourcePos | undefined => {
    const range = (n as { range?: [number, number, number] } | null)?.range;
    if (!range) return undefined;
    const { line, col } = lines.linePos(range[0]);
    return { line, column: col };
  };
  if (isAlias(node)) return;
  if (isScalar(node)) {
    if (
      typeof node.value === 'number' &&
      Number.isInteger(node.value) &&
      typeof node.source === 'string' &&
      FLOAT.test(node.source)
    ) {
      positions.markIntegralFloat(path);
    }
    return;
  }
  if (isMap(node)) {
    for (const pair of node.items) {
      if (!isPair(pair)) continue;
      const { key, nonString } = scalarKey(pair.key);
      if (key === '<<' && isScalar(pair.key)) continue;
      const childPath = [...path, key];
      const keyPos = posOf(pair.key);
      if (keyPos) positions.record(childPath, 'key', keyPos);
      const valuePos = posOf(pair.value) ?? keyPos;
      if (valuePos) positions.record(childPath, 'value', valuePos);
      if (nonString) positions.markNonStringKey(childPath);
      recordPositions(pair.value, childPath, positions, lines);
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, i) => {
      const pos = posOf(item);
      if (pos) positions.record([...path, i], 'value', pos);
      recordPositions(item, [...path, i], positions, lines);
    });
  }
};

/**
 * Parses YAML text the way Mistral's `safe_yaml.load` does (PyYAML safe loader, YAML 1.1 scalars), keeping
 * source positions for error messages. An empty document is `{}` (Mistral: `load(text) or {}`).
 * Duplicate keys are accepted, the last one wins (PyYAML). Throws {@link DslValidationError} with a
 * `syntax` issue (line and column) when the text is not YAML.
 */
export const loadYaml = (text: string): LoadedYaml => {
  const lines = new LineCounter();
  let doc: Document.Parsed;
  try {
    doc = parseDocument(text, {
      version: '1.1',
      schema: 'yaml-1.1',
      customTags,
      merge: true,
      uniqueKeys: false,
      lineCounter: lines,
      prettyErrors: true,
      strict: false,
    });
  } catch (e) {
    throw new DslValidationError([{ kind: 'syntax', path: '', message: (e as Error).message }]);
  }
  const errors = [
    ...doc.errors.filter((e) => !isTolerated(e)),
    ...doc.warnings.filter((w) => w.code === 'TAG_RESOLVE_FAILED'),
  ];
  const first = errors[0];
  if (first) throw new DslValidationError([syntaxIssue(first)]);

  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (e) {
    throw new DslValidationError([{ kind: 'syntax', path: '', message: (e as Error).message }]);
  }
  const positions = new SourcePositions();
  recordPositions(doc.contents, [], positions, lines);
  // Mistral: `safe_yaml.load(text) or {}` -- any Python-falsy document becomes an empty map.
  const falsy =
    value == null ||
    value === false ||
    value === 0 ||
    value === '' ||
    (Array.isArray(value) && value.length === 0);
  return { value: falsy ? {} : value, positions };
};
