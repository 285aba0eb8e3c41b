import { Injectable } from '@nestjs/common';
import type { SqlRunner } from '@osc/workflow-persistence';

/** A workflow about to be deleted, inside the deleting transaction (row locked). */
export interface WorkflowBeingDeleted {
  readonly id: string;
  readonly name: string;
  readonly namespace: string;
  readonly identifier: string;
}

/**
 * A rule that may refuse a workflow deletion by throwing (e.g. cron or event triggers still use it:
 * Mistral answers 400 `Can't delete workflow that has cron triggers associated. ...`). Unfinished
 * executions do not refuse it: they run on the spec snapshot stored with them (as in Mistral).
 */
export type WorkflowDeleteGuard = (db: SqlRunner, workflow: WorkflowBeingDeleted) => Promise<void>;

/**
 * Features that own resources referring to workflows (cron triggers, event triggers) register their
 * guard here in `onModuleInit`; the workflows service runs every guard before deleting.
 */
@Injectable()
export class WorkflowDeleteGuards {
  private readonly guards: WorkflowDeleteGuard[] = [];

  register(guard: WorkflowDeleteGuard): void {
    this.guards.push(guard);
  }

  async check(db: SqlRunner, workflow: WorkflowBeingDeleted): Promise<void> {
    for (const guard of this.guards) await guard(db, workflow);
  }
}
