import { type InputParameter } from './model';
import { pyStr } from './python-text';
import { type Path, type ValidationContext, WORD_NAME, isMap } from './validation-context';

/**
 * A declared `input` list (workflows and ad-hoc actions, DSL-2.2): unique entries, each a bare name
 * (required) or a one-key map `name: default` (optional, the default is a literal and never evaluated).
 */
export const parseInputList = (ctx: ValidationContext, path: Path, value: unknown): InputParameter[] => {
  if (!Array.isArray(value)) {
    ctx.typeError(path, value, 'array');
    return [];
  }
  if (value.length === 0) {
    ctx.schema(path, '[] is too short');
    return [];
  }
  const params: InputParameter[] = [];
  const seen = new Set<string>();
  value.forEach((entry, i) => {
    const at = [...path, i];
    let param: InputParameter | undefined;
    if (typeof entry === 'string') {
      if (ctx.nonEmptyString(at, entry)) param = { name: entry, required: true };
    } else if (isMap(entry)) {
      const keys = Object.keys(entry);
      const name = keys[0];
      if (keys.length !== 1 || name === undefined) {
        ctx.schema(at, `an input entry with a default must have exactly one key, got ${keys.length}`);
      } else if (!WORD_NAME.test(name)) {
        ctx.schema([...at, name], `'${name}' does not match '^\\w+$'`, 'key');
      } else {
        const value = entry[name] ?? null;
        const valuePath = [...at, name];
        const text = pyStr(value, (p) => ctx.isIntegralFloat([...valuePath, ...p]));
        param = {
          name,
          required: false,
          default: value,
          ...(text !== pyStr(value) ? { defaultText: text } : {}),
        };
      }
    } else {
      ctx.schema(at, `input entry must be a name or a one-key map 'name: default'`);
    }
    if (!param) return;
    if (seen.has(param.name)) {
      ctx.schema(at, `duplicate input parameter '${param.name}'`);
      return;
    }
    seen.add(param.name);
    params.push(param);
  });
  return params;
};

/** Back to the written form: `['a', {b: 2}]` (what the API shows as `interface.input`). */
export const inputListEntries = (params: readonly InputParameter[]): unknown[] =>
  params.map((p) => (p.required ? p.name : { [p.name]: p.default ?? null }));
