import { InvalidInputError } from '@osc/errors';
import { pyRepr } from '@osc/workflow-domain';

/** Fastify's parsed query string: repeated names become arrays. */
export type QueryBag = Readonly<Record<string, unknown>>;

/** The value of a query parameter (the last one when repeated); undefined when absent. */
export const queryValue = (query: QueryBag, name: string): string | undefined => {
  const v = query[name];
  if (v === undefined || v === null) return undefined;
  if (Array.isArray(v)) return v.length ? String(v[v.length - 1]) : undefined;
  return String(v);
};

/** WSME's wording for a parameter of the wrong type. */
export const invalidField = (field: string, value: string, reason: string): InvalidInputError =>
  new InvalidInputError(`Invalid input for field/attribute ${field}. Value: '${value}'. ${reason}`);

const TRUE = new Set(['true', '1', 'yes', 'y', 'on', 't']);
const FALSE = new Set(['false', '0', 'no', 'n', 'off', 'f']);

/** A boolean query parameter; empty is false (python-mistralclient sends `errors_only=` by default). */
export const parseBool = (field: string, raw: string): boolean => {
  const v = raw.trim().toLowerCase();
  if (v === '') return false;
  if (TRUE.has(v)) return true;
  if (FALSE.has(v)) return false;
  throw invalidField(field, raw, 'Wrong type. Expected a boolean (true or false)');
};

/** Only these parameters may appear; anything else is Mistral's `Unknown argument`. */
export const checkKnownParams = (query: QueryBag, allowed: readonly string[]): void => {
  for (const name of Object.keys(query)) {
    if (!allowed.includes(name)) throw new InvalidInputError(`Unknown argument: "${name}"`);
  }
};

/** The Python type name WSME reports for a JSON body value (`Wrong type. Expected … got '<class 'int'>'`). */
export const pyType = (v: unknown): string =>
  typeof v === 'number'
    ? Number.isInteger(v)
      ? 'int'
      : 'float'
    : typeof v === 'boolean'
      ? 'bool'
      : Array.isArray(v)
        ? 'list'
        : typeof v === 'object'
          ? 'dict'
          : 'str';

/** A body value as WSME prints it in an error: text as is, anything else as Python's repr. */
export const shownValue = (v: unknown): string => (typeof v === 'string' ? v : pyRepr(v));
