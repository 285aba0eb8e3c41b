import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InvalidInputError } from '@osc/errors';
import { type SqlRunner, eventTriggerIdsOfWorkflow } from '@osc/workflow-persistence';
import { type WorkflowBeingDeleted, WorkflowDeleteGuards } from '../workflows/workflow-delete-guards';

/** Mistral refuses to delete a workflow that event triggers (of any project) still start (400). */
export async function refuseWhileEventTriggered(db: SqlRunner, wf: WorkflowBeingDeleted): Promise<void> {
  const ids = await eventTriggerIdsOfWorkflow(db, wf.id);
  if (ids.length > 0) {
    throw new InvalidInputError(
      `Can't delete workflow that has event triggers associated. [workflow_identifier=${wf.identifier}], [event_trigger_id(s)=${ids.join(', ')}]`,
    );
  }
}

@Injectable()
export class EventTriggersDeleteGuard implements OnModuleInit {
  constructor(private readonly guards: WorkflowDeleteGuards) {}

  onModuleInit(): void {
    this.guards.register(refuseWhileEventTriggered);
  }
}
