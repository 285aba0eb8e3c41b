import { EvalFailure, fail } from '../errors';
import type { ExpressionHost } from '../host';
import {
  dictGet,
  dictHas,
  dictKey,
  isDict,
  isIter,
  LazySeq,
  PyDateTime,
  pyRepr,
  PySet,
  PyTimespan,
  toArray,
  truthy as truthyFast,
} from '../values';
import { dateProperty } from '../datetime';
import type { Arg, Node } from './parser';

/** A YAQL context frame: `$` is stored under '' and `$name` under `name`. */
export class Scope {
  readonly vars = new Map<string, unknown>();
  /** Functions defined with `def(name, lambda)` in this frame (yaql registers them on the context). */
  fns?: Map<string, Lambda>;
  userFunction(name: string): Lambda | undefined {
    return this.fns?.get(name) ?? this.parent?.userFunction(name);
  }
  constructor(
    readonly parent: Scope | null,
    readonly rt: Runtime,
  ) {}
  lookup(name: string): unknown {
    if (this.vars.has(name)) return this.vars.get(name);
    return this.parent ? this.parent.lookup(name) : null;
  }
  child(): Scope {
    return new Scope(this, this.rt);
  }
}

/** What `let(...)` returns: a frame that `->` evaluates its right side in. */
export class LetFrame {
  constructor(readonly scope: Scope) {}
}

/** `key => value` passed where no parameter of that name exists (switch, dict, #map). */
export class MappingRule {
  constructor(
    readonly key: () => unknown,
    readonly value: () => unknown,
  ) {}
}

export type Compiled = (s: Scope) => unknown;
export type Lambda = (...args: unknown[]) => unknown;

/** Passed last to a {@link Lambda}: variables it sees by name (`$first`) besides `$`, `$1`, …. */
export class LambdaVars {
  constructor(readonly vars: ReadonlyMap<string, unknown>) {}
}

export interface Invocation {
  scope: Scope;
  /** Named arguments not bound to parameters (for `**kwargs` functions). */
  kwargs: Map<string, unknown>;
  /** The receiver of a method call; absent for a function call. */
  receiver?: unknown;
}

export interface Param {
  name: string;
  lazy: boolean;
  optional: boolean;
  rest: boolean;
}

export interface FnDef {
  /** Every name the definition is registered under (aliases such as filter/where share one). */
  names?: string[];
  params: Param[];
  kwargs: boolean;
  impl: (args: unknown[], inv: Invocation) => unknown;
}

export interface FnSlot {
  fn?: FnDef;
  method?: FnDef;
}

export interface Runtime {
  functions: Map<string, FnSlot>;
  host: ExpressionHost;
  /** Lambda invocations so far; bounded so that nested queries cannot run for ever. */
  steps: number;
}

/** Most lambda invocations one evaluation may make. */
export const MAX_STEPS = 10_000_000;

/** Parses `'collection, predicate:λ, default?, *args, **kwargs'` into parameter specs. */
export function parseParams(sig: string): { params: Param[]; kwargs: boolean } {
  const params: Param[] = [];
  let kwargs = false;
  for (const raw of sig
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (raw.startsWith('**')) {
      kwargs = true;
      continue;
    }
    const rest = raw.startsWith('*');
    let name = rest ? raw.slice(1) : raw;
    const lazy = name.endsWith(':λ');
    if (lazy) name = name.slice(0, -2);
    const optional = name.endsWith('?');
    if (optional) name = name.slice(0, -1);
    params.push({ name, lazy, optional, rest });
  }
  return { params, kwargs };
}

export const MISSING: unique symbol = Symbol('missing');

function makeLambda(c: Compiled, scope: Scope): Lambda {
  return (...passed: unknown[]) => {
    if (++scope.rt.steps > MAX_STEPS) fail('Expression evaluation exceeded its step budget', 'LimitExceeded');
    const s = scope.child();
    const last = passed[passed.length - 1];
    const args = last instanceof LambdaVars ? passed.slice(0, -1) : passed;
    if (last instanceof LambdaVars) for (const [k, v] of last.vars) s.vars.set(k, v);
    if (args.length > 0) s.vars.set('', args[0]);
    for (let i = 0; i < args.length; i++) s.vars.set(String(i + 1), args[i]);
    return c(s);
  };
}

interface CArg {
  kind: 'pos' | 'named';
  keyword: string | null;
  key: Compiled;
  value: Compiled;
}

function compileArgs(args: Arg[]): CArg[] {
  return args.map((a) =>
    a.kind === 'pos'
      ? { kind: 'pos', keyword: null, key: () => null, value: compile(a.node) }
      : {
          kind: 'named',
          keyword: a.key.type === 'keyword' ? a.key.name : null,
          key: compile(a.key),
          value: compile(a.value),
        },
  );
}

/** Binds arguments to a function's parameters and calls it. `receiver` is set for method calls. */
function invoke(name: string, def: FnDef, scope: Scope, args: CArg[], receiver: unknown = MISSING): unknown {
  const positional: Array<{ value: Compiled; pre?: unknown }> = [];
  if (receiver !== MISSING) positional.push({ value: () => receiver, pre: receiver });
  const named = new Map<string, Compiled>();
  for (const a of args) {
    if (a.kind === 'named' && a.keyword !== null && def.params.some((p) => p.name === a.keyword && !p.rest)) {
      named.set(a.keyword, a.value);
    } else if (a.kind === 'named' && a.keyword !== null && def.kwargs) {
      named.set(a.keyword, a.value);
    } else if (a.kind === 'named') {
      const k = a.key;
      const v = a.value;
      positional.push({
        value: (s) =>
          new MappingRule(
            () => k(s),
            () => v(s),
          ),
      });
    } else {
      positional.push({ value: a.value });
    }
  }
  const out: unknown[] = [];
  let pi = 0;
  for (const p of def.params) {
    if (p.rest) {
      while (pi < positional.length) {
        const a = positional[pi++]!;
        out.push(p.lazy ? makeLambda(a.value, scope) : 'pre' in a ? a.pre : a.value(scope));
      }
      continue;
    }
    let c: Compiled | undefined;
    let pre: unknown = MISSING;
    if (pi < positional.length) {
      const a = positional[pi++]!;
      c = a.value;
      if ('pre' in a) pre = a.pre;
      if (named.has(p.name))
        fail(`No function "${name}" matches supplied arguments`, 'NoMatchingFunctionException');
    } else if (named.has(p.name)) {
      c = named.get(p.name);
      named.delete(p.name);
    }
    if (c === undefined) {
      if (!p.optional)
        fail(`No function "${name}" matches supplied arguments`, 'NoMatchingFunctionException');
      out.push(MISSING);
    } else if (p.lazy) out.push(pre !== MISSING ? () => pre : makeLambda(c, scope));
    else out.push(pre !== MISSING ? pre : c(scope));
  }
  if (pi < positional.length)
    fail(`No function "${name}" matches supplied arguments`, 'NoMatchingFunctionException');
  const kwargs = new Map<string, unknown>();
  for (const [k, c] of named) {
    if (!def.kwargs) fail(`No function "${name}" matches supplied arguments`, 'NoMatchingFunctionException');
    kwargs.set(k, c(scope));
  }
  return def.impl(out, receiver === MISSING ? { scope, kwargs } : { scope, kwargs, receiver });
}

function callFunction(name: string, scope: Scope, args: CArg[]): unknown {
  const user = scope.userFunction(name);
  if (user) {
    if (args.some((a) => a.kind !== 'pos'))
      fail(`No function "${name}" matches supplied arguments`, 'NoMatchingFunctionException');
    return user(...args.map((a) => a.value(scope)));
  }
  const slot = scope.rt.functions.get(name);
  if (!slot?.fn) return fail(`Unknown function "${name}"`, 'NoFunctionRegisteredException');
  return invoke(name, slot.fn, scope, args);
}

/** yaql's `call(name, args, kwargs, receiver)`: a function, or a method when a receiver is given. */
export function callByName(
  name: string,
  scope: Scope,
  args: unknown[],
  kwargs: Map<string, unknown>,
  receiver: unknown = MISSING,
): unknown {
  const cargs: CArg[] = [
    ...args.map((v): CArg => ({ kind: 'pos', keyword: null, key: () => null, value: () => v })),
    ...[...kwargs].map(([k, v]): CArg => ({ kind: 'named', keyword: k, key: () => k, value: () => v })),
  ];
  return receiver === MISSING ? callFunction(name, scope, cargs) : callMethod(name, scope, receiver, cargs);
}

function callMethod(name: string, scope: Scope, receiver: unknown, args: CArg[]): unknown {
  const slot = scope.rt.functions.get(name);
  const def = slot?.method;
  if (!def) {
    if (slot?.fn)
      return fail(
        `No method "${name}" for receiver ${pyRepr(receiver, true)} matches supplied arguments`,
        'NoMatchingMethodException',
      );
    // user functions (def) are functions only: as a method they are unknown too
    return fail(
      `Unknown method "${name}" for receiver ${typeof receiver === 'string' ? receiver : pyRepr(receiver, true)}`,
      'NoMethodRegisteredException',
    );
  }
  try {
    return invoke(name, def, scope, args, receiver);
  } catch (e) {
    // the method's own refusal reads as yaql's for a method call
    if (
      e instanceof EvalFailure &&
      e.pyType === 'NoMatchingFunctionException' &&
      [name, ...(def.names ?? [])].some((n) => e.message === `No function "${n}" matches supplied arguments`)
    ) {
      fail(
        `No method "${name}" for receiver ${typeof receiver === 'string' ? receiver : pyRepr(receiver, true)} matches supplied arguments`,
        'NoMatchingMethodException',
      );
    }
    throw e;
  }
}

/** The properties yaql registers (of datetimes and timespans), `#property#<name>` in its table. */
export const YAQL_PROPERTIES: readonly string[] = [
  'date',
  'day',
  'hour',
  'microsecond',
  'minute',
  'month',
  'offset',
  'second',
  'time',
  'timestamp',
  'utc',
  'weekday',
  'year',
  'days',
  'hours',
  'microseconds',
  'milliseconds',
  'minutes',
  'seconds',
];
const PROPERTIES = new Set(YAQL_PROPERTIES);

/** `obj.name`: key of a dict (KeyError when absent), mapped over collections of dicts. */
export function getAttribute(obj: unknown, name: string): unknown {
  if (isDict(obj)) {
    if (!obj.has(name)) fail(`'${name}'`, 'KeyError');
    return obj.get(name);
  }
  if (Array.isArray(obj) || obj instanceof PySet || obj instanceof LazySeq) {
    return toArray(obj).map((x) => getAttribute(x, name));
  }
  if (obj instanceof PyDateTime || obj instanceof PyTimespan) return dateProperty(obj, name);
  if (PROPERTIES.has(name))
    fail(`No function "#property#${name}" matches supplied arguments`, 'NoMatchingFunctionException');
  return fail(`Unknown function "#property#${name}"`, 'NoFunctionRegisteredException');
}

/** `x[i]` / `x[key, default]`. */
export function indexValue(obj: unknown, key: unknown, dflt: unknown = MISSING): unknown {
  if (isDict(obj)) {
    if (dictHas(obj, key)) return dictGet(obj, key);
    if (dflt !== MISSING) return dflt;
    return fail(pyRepr(dictKey(key)), 'KeyError');
  }
  if (
    dflt === MISSING &&
    Array.isArray(obj) &&
    !isIter(obj) &&
    typeof key === 'number' &&
    Number.isInteger(key)
  ) {
    const i = key < 0 ? obj.length + key : key;
    if (i < 0 || i >= obj.length) fail('tuple index out of range', 'IndexError');
    return obj[i];
  }
  return fail('No function "#indexer" matches supplied arguments', 'NoMatchingFunctionException');
}

/** Compiles an AST into a closure over a scope. */
export function compile(node: Node): Compiled {
  switch (node.type) {
    case 'const': {
      const v = node.value;
      return () => v;
    }
    case 'keyword': {
      const v = node.name;
      return () => v;
    }
    case 'var': {
      const name = node.name;
      return (s) => s.lookup(name);
    }
    case 'wrap':
      return compile(node.inner);
    case 'call': {
      const name = node.name;
      const args = compileArgs(node.args);
      return (s) => callFunction(name, s, args);
    }
    case 'list': {
      const args = compileArgs(node.args);
      return (s) => callFunction('#list', s, args);
    }
    case 'map': {
      const args = compileArgs(node.args);
      return (s) => callFunction('#map', s, args);
    }
    case 'index': {
      const left = compile(node.left);
      const args = node.args.map((a) => (a.kind === 'pos' ? compile(a.node) : null));
      if (args.length < 1 || args.length > 2 || args.some((a) => a === null)) {
        return () => fail('No function "#indexer" matches supplied arguments', 'NoMatchingFunctionException');
      }
      const [k, d] = args as Compiled[];
      return (s) => indexValue(left(s), k!(s), d ? d(s) : MISSING);
    }
    case 'member':
      return compileMember(node.left, node.right, node.nullSafe);
    case 'unary': {
      const operand = compile(node.operand);
      const fname = `#unary_operator_${node.op}`;
      return (s) => {
        const slot = s.rt.functions.get(fname)!;
        return slot.fn!.impl([operand(s)], { scope: s, kwargs: new Map() });
      };
    }
    case 'binary':
      return compileBinary(node.op, compile(node.left), compile(node.right));
  }
}

function compileMember(leftNode: Node, right: Node, nullSafe: boolean): Compiled {
  const left = compile(leftNode);
  if (right.type === 'keyword') {
    const name = right.name;
    return (s) => {
      const obj = left(s);
      if (nullSafe && obj === null) return null;
      return getAttribute(obj, name);
    };
  }
  if (right.type === 'call') {
    const name = right.name;
    const args = compileArgs(right.args);
    return (s) => {
      const obj = left(s);
      if (nullSafe && obj === null) return null;
      return callMethod(name, s, obj, args);
    };
  }
  const r = compile(right);
  return (s) => {
    const obj = left(s);
    if (nullSafe && obj === null) return null;
    const c = s.child();
    c.vars.set('', obj);
    return r(c);
  };
}

function compileBinary(op: string, left: Compiled, right: Compiled): Compiled {
  if (op === 'and')
    return (s) => {
      const l = left(s);
      return truthyFast(l) ? right(s) : l;
    };
  if (op === 'or')
    return (s) => {
      const l = left(s);
      return truthyFast(l) ? l : right(s);
    };
  if (op === '->') {
    return (s) => {
      const l = left(s);
      if (l instanceof LetFrame) return right(l.scope);
      return fail('No function "#operator_->" matches supplied arguments', 'NoMatchingFunctionException');
    };
  }
  const fname = `#operator_${op}`;
  return (s) => {
    const slot = s.rt.functions.get(fname);
    if (!slot?.fn) return fail(`Unknown function "${fname}"`, 'NoFunctionRegisteredException');
    return slot.fn.impl([left(s), right(s)], { scope: s, kwargs: new Map() });
  };
}

/** Wraps a JS exception thrown inside the evaluator (stack overflow, etc.) as an EvalFailure. */
export function asFailure(e: unknown): EvalFailure {
  if (e instanceof EvalFailure) return e;
  if (e instanceof RangeError) return new EvalFailure('maximum recursion depth exceeded', 'RecursionError');
  return new EvalFailure(e instanceof Error ? e.message : String(e), 'Exception');
}
