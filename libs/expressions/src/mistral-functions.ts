import { CST, Lexer, parseDocument, Scalar, visit } from 'yaml';
import { parsePyJson } from './pyjson';
import { pyYamlDump } from './pyyaml';
import { parserRefusal, readDocumentRefusal, readerRefusal } from './pyyaml-refusal';
import { EvalFailure, fail } from './errors';
import type { ExpressionHost } from './host';
import { def, STDLIB } from './yaql/stdlib';
import './yaql/datetime';
import type { FnSlot, Invocation } from './yaql/runtime';
import { MISSING } from './yaql/runtime';
import {
  floatRepr,
  fromHost,
  intRepr,
  PyBigInt,
  PyComplex,
  PyDate,
  isDict,
  isFloat,
  isNumber,
  LazySeq,
  num,
  PyFloat,
  PySet,
  pyTypeName,
  toArray,
  truthy,
  yaqlTypeName,
} from './values';

/**
 * Mistral's expression functions (the `mistral.expression.functions` entry points): env, execution,
 * executions, global, json_pp, json_dump, json_parse, yaml_dump, yaml_parse, task, tasks, uuid.
 * The data they read comes from the {@link ExpressionHost}; `ctx` is the evaluation's data root.
 */
export interface MistralCall {
  host: ExpressionHost;
  /** The data context (`$` / `_`), in the internal value model. */
  ctx: unknown;
  /** Jinja reads `__env` from the data itself (`context['__env']` on the data dict). */
  language?: 'yaql' | 'jinja';
}

/** The Python type name of a value in the calling language (yaql holds collections as tuples). */
const typeNameIn = (c: MistralCall, v: unknown): string =>
  c.language === 'jinja' ? pyTypeName(v) : yaqlTypeName(v);

const ctxValue = (ctx: unknown, key: string): unknown => (isDict(ctx) && ctx.has(key) ? ctx.get(key) : null);

function need<K extends keyof ExpressionHost>(
  host: ExpressionHost,
  name: K,
  fname: string,
): NonNullable<ExpressionHost[K]> {
  const f = host[name];
  if (typeof f !== 'function')
    return fail(`${fname}() is not available in this context`, 'NotImplementedError');
  return f.bind(host) as NonNullable<ExpressionHost[K]>;
}

/** CPython's TypeError for `value['__env']` when value is not a dict. */
function subscriptByStrError(v: unknown): string {
  if (typeof v === 'string') return "string indices must be integers, not 'str'";
  if (Array.isArray(v)) return 'list indices must be integers or slices, not str';
  return `'${pyTypeName(v)}' object is not subscriptable`;
}

const optStr = (v: unknown): string | null =>
  v === null || v === undefined || v === MISSING ? null : String(v);

export const mistralFunctions = {
  env(c: MistralCall): unknown {
    if (c.host.env) return fromHost(c.host.env());
    // Mistral: `context['__env']`. In YAQL the context always holds `__env` (null when the data
    // has none); in Jinja the context is the data, so data without `__env` raises.
    if (c.language === 'jinja') {
      if (!isDict(c.ctx)) return fail(subscriptByStrError(c.ctx), 'TypeError');
      if (!c.ctx.has('__env')) return fail("'__env'", 'KeyError');
    }
    return ctxValue(c.ctx, '__env');
  },
  execution(c: MistralCall): unknown {
    return fromHost(need(c.host, 'execution', 'execution')());
  },
  executions(
    c: MistralCall,
    id?: unknown,
    rootExecutionId?: unknown,
    state?: unknown,
    fromTime?: unknown,
    toTime?: unknown,
  ): unknown {
    return fromHost(
      need(
        c.host,
        'executions',
        'executions',
      )({
        id: optStr(id),
        rootExecutionId: optStr(rootExecutionId),
        state: optStr(state),
        fromTime: optStr(fromTime),
        toTime: optStr(toTime),
      }),
    );
  },
  global(c: MistralCall, name: unknown): unknown {
    if (c.host.global) return fromHost(c.host.global(String(name)));
    return null;
  },
  task(c: MistralCall, name?: unknown): unknown {
    const n = name === undefined || name === null || name === MISSING ? undefined : String(name);
    return fromHost(need(c.host, 'task', 'task')(n) ?? null);
  },
  tasks(
    c: MistralCall,
    workflowExecutionId?: unknown,
    recursive?: unknown,
    state?: unknown,
    flat?: unknown,
  ): unknown {
    return fromHost(
      need(
        c.host,
        'tasks',
        'tasks',
      )({
        workflowExecutionId: optStr(workflowExecutionId),
        recursive: recursive !== MISSING && truthy(recursive),
        state: optStr(state),
        flat: flat !== MISSING && truthy(flat),
      }),
    );
  },
  uuid(c: MistralCall): unknown {
    return need(c.host, 'uuid', 'uuid')();
  },
  json_pp(c: MistralCall, data?: unknown): unknown {
    const v = data === undefined || data === MISSING || !truthy(data) ? c.ctx : data;
    return pyJsonDumps(v, 4).replace(/\\n/g, '\n').replace(/ \n/g, '\n');
  },
  json_dump(_c: MistralCall, data: unknown): unknown {
    return pyJsonDumps(data, 4);
  },
  json_parse(c: MistralCall, data: unknown): unknown {
    if (typeof data !== 'string')
      return fail(`the JSON object must be str, bytes or bytearray, not ${typeNameIn(c, data)}`, 'TypeError');
    return parsePyJson(data);
  },
  yaml_dump(_c: MistralCall, data: unknown): unknown {
    return pyYamlDump(data);
  },
  yaml_parse(c: MistralCall, data: unknown): unknown {
    // PyYAML takes anything else for a stream and reads it
    if (typeof data !== 'string')
      return fail(`'${typeNameIn(c, data)}' object has no attribute 'read'`, 'AttributeError');
    const unreadable = readerRefusal(data);
    if (unreadable) return fail(unreadable.message, unreadable.type);
    let value: unknown;
    try {
      value = parseYamlSafely(data);
    } catch (e) {
      if (e instanceof EvalFailure) throw e;
      // the yaml package refused: PyYAML's words where its first problem is one we model
      const refusal = parserRefusal(data);
      if (refusal) return fail(refusal.message, refusal.type);
      return fail(`Invalid YAML: ${(e as Error).message}`, 'YAMLError');
    }
    const refused = readDocumentRefusal(data);
    if (refused) return fail(refused.message, refused.type);
    return fromHost(value);
  },
};

/**
 * yaml.safe_load without anchors and aliases: Mistral hardened yaml_parse so that an alias is
 * plain text (`*x`), which also defeats "billion laughs" expansion.
 */
function parseYamlSafely(text: string): unknown {
  const doc = parseDocument(plainIndicators(text), {
    version: '1.1',
    customTags: pyYamlTags as never,
    uniqueKeys: false,
  });
  if (doc.errors.length > 0) throw doc.errors[0]!;
  visit(doc, {
    Alias(_key, node) {
      return new Scalar(`*${node.source}`);
    },
  });
  return doc.toJS({ maxAliasCount: 0 });
}

/**
 * mistral.utils.safe_yaml's scanner: an anchor (`&a`) or alias (`*a`) indicator starts a plain
 * scalar, and so may `@`. The text is rewritten so that such scalars are quoted: `&a x` → `"&a x"`.
 */
function plainIndicators(text: string): string {
  if (!/[&*@]/.test(text)) return text;
  const tokens = [...new Lexer().lex(text)];
  const type = (k: number): string | undefined =>
    k < tokens.length ? (CST.tokenType(tokens[k]!) ?? undefined) : undefined;
  // where each token starts in the text (the lexer's markers for documents and scalars are not text)
  const offsets: number[] = [];
  let at = 0;
  for (let k = 0; k < tokens.length; k++) {
    offsets.push(at);
    const kind = type(k);
    if (kind !== 'doc-mode' && kind !== 'scalar' && kind !== 'flow-error-end') at += tokens[k]!.length;
  }
  offsets.push(at);
  let out = '';
  let flow = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    const kind = type(i);
    if (kind === 'flow-seq-start' || kind === 'flow-map-start') flow++;
    else if (kind === 'flow-seq-end' || kind === 'flow-map-end') flow--;
    if (kind === 'anchor' || kind === 'alias') {
      // an alias token swallows a following ':' (`*b: 1`): that colon is the mapping's
      const colon = kind === 'alias' && t.endsWith(':') ? ':' : '';
      let scalar = colon ? t.slice(0, -1) : t;
      // the plain scalar runs to the end of the line, a `: ` or ` #` (and `,[]{}` in a flow)
      const stops = [
        'newline',
        'comment',
        'map-value-ind',
        ...(flow > 0 ? ['comma', 'flow-seq-start', 'flow-seq-end', 'flow-map-start', 'flow-map-end'] : []),
      ];
      let j = i + 1;
      // where the first line of the scalar ends, when the lexer read a multi-line scalar after it
      let lineEnd: number | undefined;
      let firstLine = '';
      while (!colon && j < tokens.length && !stops.includes(type(j) ?? 'newline')) {
        if (type(j) === 'scalar') {
          const value = tokens[j + 1] ?? '';
          if (value.includes('\n')) {
            firstLine = value.slice(0, value.indexOf('\n'));
            lineEnd = offsets[j + 1]! + firstLine.length;
            break;
          }
          scalar += value;
          j += 2;
        } else if (type(j) === 'doc-mode') j += 1;
        else scalar += tokens[j++];
      }
      let trimmed = scalar.trimEnd();
      let rest = scalar.slice(trimmed.length);
      if (flow === 0 && !colon && (lineEnd !== undefined || j >= tokens.length || type(j) === 'newline')) {
        // a plain scalar goes on over the following lines indented deeper than its block
        const more = plainContinuation(text, lineEnd ?? offsets[j]!, blockIndent(text, offsets[i]!));
        if (more) {
          trimmed = (scalar + firstLine).trimEnd() + more.folded;
          rest = '';
          while (j < tokens.length && offsets[j]! < more.end) j++;
        }
      }
      out += JSON.stringify(trimmed) + rest + colon;
      i = j - 1;
    } else if (kind === 'scalar' && (tokens[i + 1] ?? '').startsWith('@') && !tokens[i + 1]!.includes('\n')) {
      out += JSON.stringify(tokens[i + 1]);
      i += 1;
    } else if (kind !== 'doc-mode' && kind !== 'scalar') out += t;
  }
  return out;
}

/**
 * PyYAML's indentation of the block holding a scalar that starts at `start`: the column of the key
 * it is the value of (`k: &a …`, also after `- `), of the `-` it is the item of, or else the
 * indentation of the nearest line above indented less than it (-1 at the top).
 */
function blockIndent(text: string, start: number): number {
  const lineStart = text.lastIndexOf('\n', start - 1) + 1;
  const prefix = text.slice(lineStart, start);
  const keyed = /^((?: *- +)*) *\S.*?: +$/.exec(prefix);
  if (keyed) return prefix.length - prefix.replace(/^(?: *- +)* */, '').length;
  const dashes = /^((?: *- +)*)$/.exec(prefix);
  if (dashes && prefix.includes('-')) return prefix.lastIndexOf('-');
  const column = prefix.length;
  const above = text.slice(0, lineStart).split('\n').reverse();
  for (const line of above) {
    const content = line.replace(/^ +/, '');
    if (content === '' || content.startsWith('#')) continue;
    const indent = line.length - content.length;
    if (indent < column) return indent + (/^(?:- +)*/.exec(content)?.[0].length ?? 0);
  }
  return -1;
}

/**
 * PyYAML's scan_plain past the first line (block context): the next lines indented more than
 * `indent` continue the scalar, folded (one line break is a space, each blank line a `\n`),
 * until a comment, a document marker or a line indented no deeper; a `: ` inside them is
 * PyYAML's ScannerError. Returns the folded text and where it ends, or null when nothing follows.
 */
function plainContinuation(
  text: string,
  from: number,
  indent: number,
): { folded: string; end: number } | null {
  let folded = '';
  let end = from;
  let pos = from;
  let blanks = 0;
  while (pos < text.length && text[pos] === '\n') {
    const lineStart = pos + 1;
    const lineEnd = text.indexOf('\n', lineStart) === -1 ? text.length : text.indexOf('\n', lineStart);
    const line = text.slice(lineStart, lineEnd);
    const content = line.replace(/^ +/, '');
    pos = lineEnd;
    if (content.trim() === '') {
      blanks++;
      continue;
    }
    const column = line.length - content.length;
    if (
      column <= indent ||
      content.startsWith('#') ||
      (column === 0 && /^(?:---|\.\.\.)(?:\s|$)/.test(content))
    )
      break;
    const stop = /:(?:\s|$)| #/.exec(content);
    if (stop && stop[0].startsWith(':')) {
      const lineNo = text.slice(0, lineStart).split('\n').length;
      const col = column + stop.index;
      fail(
        `mapping values are not allowed here\n  in "<unicode string>", line ${lineNo}, column ${col + 1}:\n    ${line}\n    ${' '.repeat(col)}^`,
        'ScannerError',
      );
    }
    const piece = (stop ? content.slice(0, stop.index) : content).trimEnd();
    folded += (blanks > 0 ? '\n'.repeat(blanks) : ' ') + piece;
    end = lineStart + column + piece.length;
    blanks = 0;
    if (stop) break;
  }
  return folded ? { folded, end } : null;
}

/** PyYAML's booleans: YAML 1.1 without the single-letter forms (`y`, `n` stay strings). */
const PY_BOOL_TRUE = /^(?:[Yy]es|YES|[Tt]rue|TRUE|[Oo]n|ON)$/;
const PY_BOOL_FALSE = /^(?:[Nn]o|NO|[Ff]alse|FALSE|[Oo]ff|OFF)$/;
type YamlTag = { tag: string; test?: RegExp; [k: string]: unknown };
function pyYamlTags(tags: unknown[]): unknown[] {
  return (tags as YamlTag[]).map((t) => {
    if (t.tag === 'tag:yaml.org,2002:timestamp') {
      // a date alone is a datetime.date in PyYAML (a PyDate here), a date and time a datetime
      const resolve = t['resolve'] as (s: string) => unknown;
      return {
        ...t,
        resolve: (src: string) => {
          const m = /^(\d{4})-(\d\d)-(\d\d)$/.exec(src);
          return m ? new PyDate(Number(m[1]), Number(m[2]), Number(m[3])) : resolve(src);
        },
      };
    }
    if (t.tag !== 'tag:yaml.org,2002:bool' || !t.test) return t;
    const truthy = t.test.test('true');
    return { ...t, test: truthy ? PY_BOOL_TRUE : PY_BOOL_FALSE };
  });
}

/** Python `json.dumps(v, indent=indent)` (ensure_ascii, `, `/`: ` separators). */
export function pyJsonDumps(v: unknown, indent: number | null, level = 0, sortKeys = false): string {
  const pad = indent === null ? '' : `\n${' '.repeat(indent * (level + 1))}`;
  const padEnd = indent === null ? '' : `\n${' '.repeat(indent * level)}`;
  const sep = indent === null ? ', ' : ',';
  if (v === null || v === undefined) return 'null';
  if (v === true) return 'true';
  if (v === false) return 'false';
  if (v instanceof PyBigInt) return v.value.toString();
  if (isNumber(v)) {
    const n = num(v);
    if (Number.isNaN(n)) return 'NaN';
    if (!Number.isFinite(n)) return n > 0 ? 'Infinity' : '-Infinity';
    return isFloat(v) ? floatRepr(n) : intRepr(n);
  }
  if (typeof v === 'string') return pyJsonString(v);
  // Mistral's json_dump is oslo.serialization's jsonutils.dumps: its to_primitive reads an iterator
  // (yaql's map, filter, islice, chain, range) out into a list. A generator-backed query (distinct,
  // selectMany, enumerate) prints there as its repr with a memory address; here it is read out too.
  if (Array.isArray(v) || v instanceof PySet || v instanceof LazySeq) {
    const a = toArray(v);
    if (a.length === 0) return '[]';
    return `[${a.map((x) => pad + pyJsonDumps(x, indent, level + 1, sortKeys)).join(sep)}${padEnd}]`;
  }
  if (v instanceof Map) {
    if (v.size === 0) return '{}';
    const entries = [...v.entries()].map(([k, x]) => [jsonKey(k), x] as const);
    if (sortKeys) entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    const parts = entries.map(
      ([k, x]) => `${pad}${pyJsonString(k)}: ${pyJsonDumps(x, indent, level + 1, sortKeys)}`,
    );
    return `{${parts.join(sep)}${padEnd}}`;
  }
  if (v instanceof PyComplex) return fail('Object of type complex is not JSON serializable', 'TypeError');
  return fail(`Object of type ${typeof v} is not JSON serializable`, 'TypeError');
}

function jsonKey(k: unknown): string {
  if (typeof k === 'string') return k;
  if (k === null) return 'null';
  if (k === true) return 'true';
  if (k === false) return 'false';
  if (k instanceof PyFloat) return floatRepr(k.value);
  if (typeof k === 'number') return Number.isInteger(k) ? String(k) : floatRepr(k);
  return fail('keys must be str, int, float, bool or None', 'TypeError');
}

/** A string as Python's `json.dumps` writes it (ensure_ascii: non-ASCII as `\uXXXX`, UTF-16 units). */
export function pyJsonString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i]!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (c < 0x20 || c > 0x7e) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** The YAQL function table: the standard library plus Mistral's functions. */
export const MISTRAL_YAQL_FUNCTIONS = new Map<string, FnSlot>([...STDLIB].map(([k, v]) => [k, { ...v }]));

const call = (inv: Invocation): MistralCall => ({ host: inv.scope.rt.host, ctx: rootData(inv) });
function rootData(inv: Invocation): unknown {
  let s = inv.scope;
  while (s.parent) s = s.parent;
  return s.vars.get('');
}
const kw = (inv: Invocation, positional: unknown, ...names: string[]): unknown => {
  if (positional !== MISSING) return positional;
  for (const n of names) if (inv.kwargs.has(n)) return inv.kwargs.get(n);
  return MISSING;
};
const Y = MISTRAL_YAQL_FUNCTIONS;
def(Y, 'env', 'F', '', (_a, inv) => mistralFunctions.env(call(inv)));
def(Y, 'execution', 'F', '', (_a, inv) => mistralFunctions.execution(call(inv)));
def(
  Y,
  'executions',
  'F',
  'id?, rootExecutionId?, state?, fromTime?, toTime?, **kwargs',
  ([id, root, state, from, to], inv) =>
    mistralFunctions.executions(
      call(inv),
      kw(inv, id),
      kw(inv, root, 'root_execution_id'),
      kw(inv, state),
      kw(inv, from, 'from_time'),
      kw(inv, to, 'to_time'),
    ),
);
def(Y, 'global', 'F', 'varName?, **kwargs', ([n], inv) => {
  const name = kw(inv, n, 'var_name');
  if (name === MISSING || name === undefined)
    return fail('No function "global" matches supplied arguments', 'NoMatchingFunctionException');
  return mistralFunctions.global(call(inv), name);
});
def(Y, 'task', 'F', 'taskName?, **kwargs', ([n], inv) =>
  mistralFunctions.task(call(inv), kw(inv, n, 'task_name')),
);
def(Y, 'tasks', 'F', 'workflowExecutionId?, recursive?, state?, flat?, **kwargs', ([w, r, s, f], inv) =>
  mistralFunctions.tasks(call(inv), kw(inv, w, 'workflow_execution_id'), kw(inv, r), kw(inv, s), kw(inv, f)),
);
def(Y, 'uuid', 'F', '', (_a, inv) => mistralFunctions.uuid(call(inv)));
def(Y, 'json_pp', 'F', 'data?', ([d], inv) => {
  // In YAQL Mistral's `context` argument is yaql's context object, which json cannot serialize.
  if (d === MISSING || !truthy(d))
    return fail('Object of type Context is not JSON serializable', 'TypeError');
  return mistralFunctions.json_pp(call(inv), d);
});
def(Y, 'json_dump', 'F', 'data', ([d], inv) => mistralFunctions.json_dump(call(inv), d));
def(Y, 'json_parse', 'F', 'data', ([d], inv) => mistralFunctions.json_parse(call(inv), d));
def(Y, 'yaml_dump', 'F', 'data', ([d], inv) => mistralFunctions.yaml_dump(call(inv), d));
def(Y, 'yaml_parse', 'F', 'data', ([d], inv) => mistralFunctions.yaml_parse(call(inv), d));
