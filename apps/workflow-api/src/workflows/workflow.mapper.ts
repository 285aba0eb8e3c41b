import type { DefinitionRow } from '@osc/workflow-persistence';

/**
 * Workflow rows come out of the store already in wire form (`interface` as the JSON string GET and
 * list show). Only the POST/PUT answers differ: there Mistral returns `interface` as an object.
 */
export function toWriteResponse(row: DefinitionRow, iface: unknown): DefinitionRow {
  return { ...row, interface: iface };
}
