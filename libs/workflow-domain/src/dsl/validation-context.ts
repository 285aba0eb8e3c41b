import { type DslIssue, type DslIssueKind } from './dsl-validation-error';
import { type ExpressionValidator, isExpression, validateExpressionText } from './expression-syntax';
import { pyRepr } from './python-text';
import { type PathSegment, type SourcePositions } from './yaml-loader';

export type Path = readonly PathSegment[];

/** `workflows.wf1.tasks.t2.on-success[0]` */
export const formatPath = (path: Path): string =>
  path.reduce<string>(
    (out, seg) => (typeof seg === 'number' ? `${out}[${seg}]` : out ? `${out}.${seg}` : seg),
    '',
  );

export type JsonMap = Record<string, unknown>;

export const isMap = (v: unknown): v is JsonMap => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Python truthiness of a parsed YAML value. */
export const isTruthy = (v: unknown): boolean =>
  !(
    v === null ||
    v === undefined ||
    v === false ||
    v === 0 ||
    v === '' ||
    (Array.isArray(v) && v.length === 0) ||
    (isMap(v) && Object.keys(v).length === 0)
  );

/** Python's `\w+` on str patterns (Unicode letters, digits, underscore). */
export const WORD_NAME = /^[\p{L}\p{N}_]+$/u;

/** Python repr of a value for messages, cut to a readable length. */
export const shortRepr = (v: unknown): string => {
  const text = pyRepr(v);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
};

const TYPE_NAMES: Readonly<Record<string, string>> = {
  object: 'object',
  array: 'array',
  string: 'string',
  integer: 'integer',
  boolean: 'boolean',
};

/**
 * Collects issues while one document is checked. Paths are logical (`workflows.<name>...`); `toSource` maps
 * them to the document's own key path for source positions (a workflow list has no `workflows` level).
 */
export class ValidationContext {
  readonly issues: DslIssue[] = [];

  constructor(
    private readonly positions: SourcePositions | undefined,
    private readonly toSource: (path: Path) => Path,
    readonly expressionValidator: ExpressionValidator | undefined,
  ) {}

  add(kind: DslIssueKind, path: Path, message: string, at: 'key' | 'value' = 'value'): void {
    const pos = this.positions?.at(this.toSource(path), at);
    this.issues.push({
      kind,
      path: formatPath(path),
      message,
      ...(pos ? { line: pos.line, column: pos.column } : {}),
    });
  }

  schema(path: Path, message: string, at: 'key' | 'value' = 'value'): void {
    this.add('schema', path, message, at);
  }

  semantic(path: Path, message: string, at: 'key' | 'value' = 'value'): void {
    this.add('semantic', path, message, at);
  }

  /** Number of schema issues so far (the ones that make a part impossible to model). */
  count(): number {
    return this.issues.filter((i) => i.kind === 'schema').length;
  }

  isIntegralFloat(path: Path): boolean {
    return this.positions?.isIntegralFloat(this.toSource(path)) ?? false;
  }

  isNonStringKey(path: Path): boolean {
    return this.positions?.isNonStringKey(this.toSource(path)) ?? false;
  }

  // --- type checks: each returns true when the value is acceptable, else records a schema issue --------

  typeError(path: Path, value: unknown, type: string): false {
    this.schema(path, `${shortRepr(value)} is not of type '${TYPE_NAMES[type] ?? type}'`);
    return false;
  }

  /** A map; `minProperties` 1 unless `allowEmpty`. */
  map(path: Path, value: unknown, allowEmpty = false): value is JsonMap {
    if (!isMap(value)) return this.typeError(path, value, 'object');
    if (!allowEmpty && Object.keys(value).length === 0) {
      this.schema(path, '{} does not have enough properties');
      return false;
    }
    return true;
  }

  /** Mistral `NONEMPTY_DICT` with the keys restricted to `^\w+$` (DSL-1.4). */
  wordKeyedMap(path: Path, value: unknown): value is JsonMap {
    if (!this.map(path, value)) return false;
    let ok = true;
    for (const key of Object.keys(value)) {
      if (!WORD_NAME.test(key)) {
        this.schema([...path, key], `${shortRepr(key)} does not match '^\\w+$'`, 'key');
        ok = false;
      }
    }
    return ok;
  }

  /** Reports every key outside `allowed` (jsonschema `additionalProperties: false`). */
  knownKeys(
    path: Path,
    value: JsonMap,
    allowed: ReadonlySet<string>,
    hint?: (key: string) => string | undefined,
  ): boolean {
    let ok = true;
    for (const key of Object.keys(value)) {
      if (!allowed.has(key)) {
        const extra = hint?.(key);
        this.schema(
          [...path, key],
          `Additional properties are not allowed (${shortRepr(key)} was unexpected)${extra ? ` ${extra}` : ''}`,
          'key',
        );
        ok = false;
      }
    }
    return ok;
  }

  required(path: Path, value: JsonMap, key: string): boolean {
    if (key in value) return true;
    this.schema(path, `${shortRepr(key)} is a required property`);
    return false;
  }

  nonEmptyString(path: Path, value: unknown): value is string {
    if (typeof value !== 'string') return this.typeError(path, value, 'string');
    if (value.length === 0) {
      this.schema(path, `'' is too short`);
      return false;
    }
    return true;
  }

  /** Mistral `UNIQUE_STRING_LIST`. */
  uniqueStringList(path: Path, value: unknown): value is string[] {
    if (!Array.isArray(value)) return this.typeError(path, value, 'array');
    if (value.length === 0) {
      this.schema(path, '[] is too short');
      return false;
    }
    let ok = true;
    value.forEach((item, i) => {
      if (!this.nonEmptyString([...path, i], item)) ok = false;
    });
    if (ok && new Set(value).size !== value.length) {
      this.schema(path, `${shortRepr(value)} has non-unique elements`);
      ok = false;
    }
    return ok;
  }

  /** A string or a unique string list, normalised to a list (`requires`, `with-items`). */
  stringOrList(path: Path, value: unknown): string[] | undefined {
    if (typeof value === 'string') return this.nonEmptyString(path, value) ? [value] : undefined;
    if (Array.isArray(value)) return this.uniqueStringList(path, value) ? value : undefined;
    this.schema(path, `${shortRepr(value)} is not valid under any of the given schemas`);
    return undefined;
  }

  /** Mistral `EXPRESSION_OR_POSITIVE_INTEGER` (a non-negative integer, or one expression). */
  expressionOrCount(path: Path, value: unknown): value is number | string {
    if (isExpression(value)) return this.expressions(path, value);
    if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return true;
    if (typeof value === 'number' && Number.isInteger(value)) {
      this.schema(path, `${shortRepr(value)} is less than the minimum of 0`);
      return false;
    }
    this.schema(path, `${shortRepr(value)} is not valid under any of the given schemas`);
    return false;
  }

  /** Mistral `EXPRESSION_OR_BOOLEAN`. */
  expressionOrBoolean(path: Path, value: unknown): value is boolean | string {
    if (isExpression(value)) return this.expressions(path, value);
    if (typeof value === 'boolean') return true;
    this.schema(path, `${shortRepr(value)} is not valid under any of the given schemas`);
    return false;
  }

  /** Mistral `EXPRESSION`: the whole string is one expression. */
  expression(path: Path, value: unknown): value is string {
    if (!isExpression(value)) {
      this.schema(path, `${shortRepr(value)} is not valid under any of the given schemas`);
      return false;
    }
    return this.expressions(path, value);
  }

  /** Checks the syntax of every expression in `value`, recursing into map values and list items. */
  expressions(path: Path, value: unknown): boolean {
    if (!this.expressionValidator) return true;
    if (typeof value === 'string') {
      const errors = validateExpressionText(value, this.expressionValidator);
      for (const e of errors) this.add('expression', path, e);
      return errors.length === 0;
    }
    let ok = true;
    if (Array.isArray(value)) value.forEach((v, i) => (ok = this.expressions([...path, i], v) && ok));
    else if (isMap(value))
      for (const [k, v] of Object.entries(value)) ok = this.expressions([...path, k], v) && ok;
    return ok;
  }
}
