import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InvalidInputError } from '@osc/errors';
import type { SqlRunner } from '@osc/workflow-persistence';
import { type WorkflowBeingDeleted, WorkflowDeleteGuards } from './workflow-delete-guards';

/** States in which an execution still needs its workflow definition. */
const UNFINISHED = ['IDLE', 'RUNNING', 'PAUSED'] as const;

/**
 * Refuses to delete a workflow while executions of it are unfinished (issue 3: a workflow in use by
 * a running execution cannot be deleted); 400 like the reference's refusal for cron triggers.
 */
export async function refuseWhileRunning(db: SqlRunner, wf: WorkflowBeingDeleted): Promise<void> {
  const rows: { id: string }[] = await db.query(
    `SELECT "id" FROM "workflow_executions" WHERE "workflow_id" = $1 AND "state" IN (${UNFINISHED.map((_, i) => `$${i + 2}`).join(', ')}) ORDER BY "created_at", "id" LIMIT 5`,
    [wf.id, ...UNFINISHED],
  );
  if (rows.length > 0) {
    throw new InvalidInputError(
      `Can't delete workflow that has running executions. [workflow_identifier=${wf.identifier}, namespace=${wf.namespace}], [execution_id(s)=${rows.map((r) => r.id).join(', ')}]`,
    );
  }
}

@Injectable()
export class RunningExecutionsGuard implements OnModuleInit {
  constructor(private readonly guards: WorkflowDeleteGuards) {}

  onModuleInit(): void {
    this.guards.register(refuseWhileRunning);
  }
}
