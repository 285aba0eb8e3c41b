import { InvalidInputError } from '@osc/errors';
import { checkActionInput, pyRepr, type InputParameter } from '@osc/workflow-domain';

/**
 * The reference's text for an action input that does not fit the declared parameters (DSL-3.5):
 * `Invalid input [name=<action>, class=<impl>, missing=['a'], unexpected=['b']]`, each list only when
 * non-empty, lists in Python repr.
 */
export const invalidInputMessage = (
  name: string,
  className: string,
  missing: readonly string[],
  unexpected: readonly string[],
): string => {
  let msg = `Invalid input [name=${name}, class=${className}`;
  if (missing.length > 0) msg += `, missing=${pyRepr([...missing])}`;
  if (unexpected.length > 0) msg += `, unexpected=${pyRepr([...unexpected])}`;
  return `${msg}]`;
};

/**
 * Checks `input` against `params` and returns it with the defaults of absent optional parameters
 * filled in. Throws {@link InvalidInputError} with {@link invalidInputMessage} when a required
 * parameter is missing or an undeclared one is given.
 */
export const validateActionInput = (
  name: string,
  className: string,
  params: readonly InputParameter[],
  input: Readonly<Record<string, unknown>>,
): Record<string, unknown> => {
  const { missing, unexpected } = checkActionInput(params, input);
  if (missing.length > 0 || unexpected.length > 0) {
    throw new InvalidInputError(invalidInputMessage(name, className, missing, unexpected));
  }
  const filled: Record<string, unknown> = { ...input };
  for (const p of params) {
    if (!p.required && !(p.name in filled)) filled[p.name] = structuredClone(p.default ?? null);
  }
  return filled;
};
