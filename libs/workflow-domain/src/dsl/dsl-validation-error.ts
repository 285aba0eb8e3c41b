import { InvalidInputError } from '@osc/errors';

/**
 * What went wrong where: `schema` issues carry Mistral's `Invalid DSL: ` prefix, `syntax` issues are YAML
 * parse failures (`Definition could not be parsed: `), `version` is `Unsupported DSL version: `, and
 * `semantic`/`expression` keep Mistral's own wording (`Task 'x' not found.`).
 */
export type DslIssueKind = 'syntax' | 'version' | 'schema' | 'semantic' | 'expression';

/** One validation finding. `path` is the logical path (`workflows.wf1.tasks.t2.on-success[0]`). */
export interface DslIssue {
  readonly kind: DslIssueKind;
  readonly path: string;
  readonly message: string;
  /** 1-based position in the submitted text, when known. */
  readonly line?: number;
  readonly column?: number;
}

const PREFIX: Readonly<Record<DslIssueKind, string>> = {
  syntax: 'Definition could not be parsed: ',
  version: 'Unsupported DSL version: ',
  schema: 'Invalid DSL: ',
  semantic: '',
  expression: '',
};

/** Mistral-like text of one issue, e.g. `Task 't9' not found. [path=workflows.wf.tasks.t1.on-success, line=5, column=19]`. */
export const formatDslIssue = (issue: DslIssue): string => {
  const where: string[] = [];
  if (issue.path) where.push(`path=${issue.path}`);
  if (issue.line !== undefined) where.push(`line=${issue.line}`, `column=${issue.column ?? 1}`);
  return `${PREFIX[issue.kind]}${issue.message}${where.length ? ` [${where.join(', ')}]` : ''}`;
};

/** Upper bound of issues kept in the message so that a huge broken document gives a bounded error text. */
const MAX_ISSUES_IN_MESSAGE = 20;

/**
 * A definition (workflow list, workbook, action list) that cannot be stored. HTTP 400; the message is the
 * list of issues, one per line, each naming its path. `issues` keeps them structured for callers.
 */
export class DslValidationError extends InvalidInputError {
  readonly issues: readonly DslIssue[];

  constructor(issues: readonly DslIssue[]) {
    const shown = issues.slice(0, MAX_ISSUES_IN_MESSAGE).map(formatDslIssue);
    if (issues.length > MAX_ISSUES_IN_MESSAGE)
      shown.push(`... and ${issues.length - MAX_ISSUES_IN_MESSAGE} more`);
    super(shown.join('\n') || 'Invalid DSL');
    this.issues = issues;
  }
}
