import { STANDARD_ACTIONS } from '@osc/workflow-domain';
import type { SystemActionRow } from '@osc/workflow-persistence';

const NAMES = new Set(STANDARD_ACTIONS.map((a) => a.name));

/** True for the name of a standard (system) action: such names cannot be created, changed or deleted. */
export const isStandardActionName = (name: string): boolean => NAMES.has(name);

/** The standard actions as the actions API lists them (is_system true, scope public, no project). */
export const systemActionRows = (): SystemActionRow[] =>
  STANDARD_ACTIONS.map((a) => ({ name: a.name, description: a.description, input: a.inputString }));
