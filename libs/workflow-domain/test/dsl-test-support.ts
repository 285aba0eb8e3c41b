import { DslValidationError, type DslIssue } from '../src';

/** Strips the common indentation of a template literal (first and last blank lines dropped). */
export const y = (strings: TemplateStringsArray, ...values: unknown[]): string => {
  const raw = strings.reduce((out, s, i) => out + s + (i < values.length ? String(values[i]) : ''), '');
  const lines = raw
    .replace(/^\n/, '')
    .replace(/\n[ \t]*$/, '')
    .split('\n');
  const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => l.length - l.trimStart().length));
  return `${lines.map((l) => l.slice(indent)).join('\n')}\n`;
};

/** A workflow list with one direct workflow `wf` whose body is `body` (indented under `wf:`). */
export const wf = (body: string, header = ''): string =>
  `version: '2.0'\nwf:\n${header}${body
    .split('\n')
    .map((l) => (l ? `  ${l}` : l))
    .join('\n')}`;

/** A workflow `wf` with the given tasks block (indented under `tasks:`). */
export const tasks = (block: string, extra = ''): string =>
  wf(
    `${extra}tasks:\n${block
      .split('\n')
      .map((l) => (l ? `  ${l}` : l))
      .join('\n')}`,
  );

/** Runs `fn`, expects a DslValidationError and returns its issues. */
export const issuesOf = (fn: () => unknown): readonly DslIssue[] => {
  try {
    fn();
  } catch (e) {
    if (e instanceof DslValidationError) return e.issues;
    throw e;
  }
  throw new Error('expected a DslValidationError, got success');
};
