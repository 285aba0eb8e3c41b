import { InvalidInputError } from '@osc/errors';

/** An action's arguments as an object, or Cinder's schema error naming the action. */
export function expectArgs(args: unknown, action: string): Record<string, unknown> {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    throw new InvalidInputError(
      `Invalid input for field/attribute ${action}. Value: ${JSON.stringify(args) ?? 'None'}. not of type 'object'`,
    );
  }
  return args as Record<string, unknown>;
}
