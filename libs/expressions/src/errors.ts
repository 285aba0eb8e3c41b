import { AppError } from '@osc/errors';

/** Which language an expression is written in. */
export type ExpressionLanguage = 'yaql' | 'jinja';

/**
 * An expression could not be parsed or evaluated. `kind` is 'invalid' (HTTP 400 at the API edge).
 * The message follows Mistral's state_info wording:
 * `Can not evaluate YAQL expression [expression=<expr>, error=<cause>]`; the evaluation context is
 * never part of the message (Mistral appends it; we deliberately do not, see DSL-18.1).
 */
export class ExpressionError extends AppError {
  readonly kind = 'invalid';
  constructor(
    readonly language: ExpressionLanguage,
    readonly expression: string,
    readonly reason: string,
    readonly phase: 'syntax' | 'evaluation',
    /** Where in `expression` a syntax error was found (0-based), when the parser knows it. */
    readonly position: number | null = null,
  ) {
    super(
      phase === 'syntax'
        ? `Invalid ${language === 'yaql' ? 'YAQL' : 'Jinja'} expression [expression=${expression}, error=${reason}]`
        : `Can not evaluate ${language === 'yaql' ? 'YAQL' : 'Jinja'} expression [expression=${expression}, error=${reason}]`,
    );
  }
}

/**
 * Internal failure raised while evaluating; turned into an ExpressionError (with the expression text)
 * at the public boundary. `pyType` names the Python exception the reference would raise.
 */
export class EvalFailure extends Error {
  constructor(
    message: string,
    readonly pyType = 'YaqlException',
  ) {
    super(message);
    this.name = 'EvalFailure';
  }
}

/** Syntax failure inside a lexer/parser; `position` (0-based, in the parsed text) when known. */
export class SyntaxFailure extends Error {
  constructor(
    message: string,
    readonly position?: number,
  ) {
    super(message);
    this.name = 'SyntaxFailure';
  }
}

export const fail = (message: string, pyType?: string): never => {
  throw new EvalFailure(message, pyType);
};
