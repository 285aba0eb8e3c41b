import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { runInTransaction } from '@osc/persistence';
import { CLOCK, type Clock, DATA_SOURCE } from '@osc/platform';
import { parseWorkflows, pyJsonDumps, renderInputString, workflowInterface } from '@osc/workflow-domain';
import {
  type ColumnValues,
  WORKFLOW_DEFINITIONS,
  insertDefinition,
  toSeconds,
} from '@osc/workflow-persistence';
import { definitionChecksum } from '../definitions/definition-text';
import { SYSTEM_WORKFLOW_DEFINITIONS, SYSTEM_WORKFLOW_PROJECT } from './system-workflow-definitions';

export const SYSTEM_WORKFLOWS_ENABLED = Symbol('SYSTEM_WORKFLOWS_ENABLED');

/**
 * Registers the standard workflows (public, `is_system`, project `<default-project>`) when the API
 * starts, as Mistral's `populate` does. A row that exists already is left alone (the unique index on
 * project, namespace and name makes concurrent replicas insert each workflow once), so an admin's
 * change survives restarts; one an admin deleted comes back at the next start.
 */
@Injectable()
export class SystemWorkflowsService implements OnModuleInit {
  private readonly logger = new Logger('system-workflows');

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(SYSTEM_WORKFLOWS_ENABLED) private readonly enabled: boolean,
  ) {}

  async onModuleInit(): Promise<void> {
    if (!this.enabled) return;
    const added = await this.register();
    if (added.length) this.logger.log(`registered system workflows: ${added.join(', ')}`);
  }

  /** Inserts the missing standard workflows; returns the names inserted. */
  async register(): Promise<string[]> {
    const at = toSeconds(this.clock.now()).toISOString();
    return runInTransaction(this.db, async (em) => {
      const added: string[] = [];
      for (const text of SYSTEM_WORKFLOW_DEFINITIONS) {
        // Their nova.* actions are unknown here: store them unvalidated, as Mistral stores them.
        const parsed = parseWorkflows(text, { validate: false });
        for (const wf of parsed.workflows) {
          const definition = parsed.definitions[wf.name] ?? text;
          const row = await insertDefinition(em, WORKFLOW_DEFINITIONS, {
            name: { value: wf.name },
            namespace: { value: '' },
            project_id: { value: SYSTEM_WORKFLOW_PROJECT },
            scope: { value: 'public' },
            is_system: { value: true },
            definition: { value: definition },
            checksum: { value: definitionChecksum(definition) },
            spec: { value: wf, kind: 'json' },
            input: { value: renderInputString(wf.input) },
            interface: { value: pyJsonDumps(workflowInterface(wf)) },
            tags: { value: wf.tags, kind: 'json' },
            created_at: { value: at, kind: 'timestamp' },
          } as ColumnValues);
          if (row) added.push(wf.name);
        }
      }
      return added;
    });
  }
}
