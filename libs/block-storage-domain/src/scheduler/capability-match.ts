/**
 * Matching of a volume type's extra-spec requirement against a back-end capability (BS-10.2).
 * Requirement forms: `<is> True|False`, `<in> text` (substring), `<or> a <or> b ...`, numeric
 * `== n`, `!= n`, `>= n`, `<= n`, `= n` (numeric at least), string `s== s!= s< s<= s> s>=`, or
 * anything else as plain string equality. Only the first word after an operator counts.
 */

const TRUE_WORDS = ['true', '1', 'yes', 'y', 'on', 't'];

const truthy = (v: unknown): boolean =>
  typeof v === 'boolean'
    ? v
    : typeof v === 'number'
      ? v !== 0
      : TRUE_WORDS.includes(String(v).trim().toLowerCase());

/** Capability values as their string form: booleans render as Python does (`True`/`False`). */
export const capabilityText = (v: unknown): string =>
  typeof v === 'boolean'
    ? v
      ? 'True'
      : 'False'
    : typeof v === 'string'
      ? v
      : typeof v === 'number'
        ? String(v)
        : (JSON.stringify(v) ?? '');

const asNumber = (v: unknown): number | null => {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v !== 'string' || v.trim() === '') return null;
  const n = Number(v.trim());
  return Number.isFinite(n) ? n : null;
};

const numeric =
  (cmp: (a: number, b: number) => boolean) =>
  (cap: unknown, word: string): boolean => {
    const a = asNumber(cap);
    const b = asNumber(word);
    return a !== null && b !== null && cmp(a, b);
  };

const textual =
  (cmp: (a: string, b: string) => boolean) =>
  (cap: unknown, word: string): boolean =>
    cmp(capabilityText(cap), word);

const OPERATORS: Readonly<Record<string, (cap: unknown, word: string) => boolean>> = {
  '=': numeric((a, b) => a >= b),
  '==': numeric((a, b) => a === b),
  '!=': numeric((a, b) => a !== b),
  '>=': numeric((a, b) => a >= b),
  '<=': numeric((a, b) => a <= b),
  '<in>': (cap, word) => capabilityText(cap).includes(word),
  '<is>': (cap, word) => truthy(cap) === truthy(word),
  's==': textual((a, b) => a === b),
  's!=': textual((a, b) => a !== b),
  's<': textual((a, b) => a < b),
  's<=': textual((a, b) => a <= b),
  's>': textual((a, b) => a > b),
  's>=': textual((a, b) => a >= b),
};

/** Whether `capability` satisfies `requirement`. A missing capability (undefined/null) never does. */
export function matchesRequirement(capability: unknown, requirement: string | null): boolean {
  if (requirement === null) return capability === null || capability === undefined;
  const words = requirement.split(/\s+/).filter((w) => w.length > 0);
  const op = words[0];
  if (op === undefined) return capabilityText(capability) === requirement;
  if (op === '<or>') {
    if (capability === null || capability === undefined) return false;
    const text = capabilityText(capability);
    const alternatives = words.filter((w, i) => i % 2 === 1);
    return alternatives.includes(text);
  }
  const method = Object.prototype.hasOwnProperty.call(OPERATORS, op) ? OPERATORS[op] : undefined;
  if (method === undefined)
    return capability !== null && capability !== undefined && capabilityText(capability) === requirement;
  if (capability === null || capability === undefined) return false;
  const word = words[1];
  if (word === undefined) return false;
  return method(capability, word);
}
