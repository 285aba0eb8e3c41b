import { parseCommand } from './inline-params';
import { parseInputList } from './input-list';
import { type ActionSpec, type InputParameter } from './model';
import { checkItemName } from './workflow-parser';
import { type JsonMap, type Path, type ValidationContext } from './validation-context';

const ACTION_KEYS = new Set([
  'base',
  'base-input',
  'input',
  'output',
  'description',
  'tags',
  'name',
  'version',
]);

/** One ad-hoc action (DSL-7.1): `base` (required, with optional inline parameters), `base-input`, `input`, `output`. */
export const parseAction = (
  ctx: ValidationContext,
  path: Path,
  name: string,
  fullName: string,
  value: unknown,
): ActionSpec | undefined => {
  const before = ctx.count();
  checkItemName(ctx, path, name, 'Action');
  if (!ctx.map(path, value)) return undefined;
  const data = value;
  ctx.knownKeys(path, data, ACTION_KEYS);

  let base = '';
  let inline: Record<string, unknown> = {};
  if (ctx.required(path, data, 'base') && ctx.nonEmptyString([...path, 'base'], data.base)) {
    const parsed = parseCommand(data.base);
    if (parsed.ok) {
      base = parsed.name;
      inline = parsed.params;
      ctx.expressions([...path, 'base'], parsed.params);
    } else ctx.schema([...path, 'base'], parsed.error);
  }
  let baseInput: JsonMap = {};
  if ('base-input' in data && ctx.wordKeyedMap([...path, 'base-input'], data['base-input'])) {
    ctx.expressions([...path, 'base-input'], data['base-input']);
    baseInput = data['base-input'];
  }
  const input: InputParameter[] = 'input' in data ? parseInputList(ctx, [...path, 'input'], data.input) : [];
  if ('output' in data) ctx.expressions([...path, 'output'], data.output);
  let description: string | undefined;
  if ('description' in data && ctx.nonEmptyString([...path, 'description'], data.description))
    description = data.description;
  let tags: string[] = [];
  if ('tags' in data && ctx.uniqueStringList([...path, 'tags'], data.tags)) tags = data.tags;
  if (ctx.count() !== before) return undefined;

  return {
    name: fullName,
    ...(description !== undefined ? { description } : {}),
    tags,
    base,
    baseInput: { ...baseInput, ...inline },
    input,
    hasOutput: 'output' in data,
    ...('output' in data ? { output: data.output ?? null } : {}),
  };
};
