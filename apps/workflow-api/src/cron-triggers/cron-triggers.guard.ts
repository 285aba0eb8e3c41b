import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InvalidInputError } from '@osc/errors';
import { type SqlRunner, cronTriggerNamesOfWorkflow } from '@osc/workflow-persistence';
import { type WorkflowBeingDeleted, WorkflowDeleteGuards } from '../workflows/workflow-delete-guards';

/** Mistral refuses to delete a workflow that cron triggers still start (400). */
export async function refuseWhileTriggered(db: SqlRunner, wf: WorkflowBeingDeleted): Promise<void> {
  const names = await cronTriggerNamesOfWorkflow(db, wf.id);
  if (names.length > 0) {
    throw new InvalidInputError(
      `Can't delete workflow that has cron triggers associated. [workflow_identifier=${wf.identifier}, namespace=${wf.namespace}], [cron_trigger_name(s)=${names.join(', ')}]`,
    );
  }
}

@Injectable()
export class CronTriggersDeleteGuard implements OnModuleInit {
  constructor(private readonly guards: WorkflowDeleteGuards) {}

  onModuleInit(): void {
    this.guards.register(refuseWhileTriggered);
  }
}
