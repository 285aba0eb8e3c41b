import type { EntityManager } from 'typeorm';
import { ENGINE_COMMAND_QUEUE, type EngineCommandMessage, engineCommand } from '@osc/contracts';
import { AppError } from '@osc/errors';
import type { OutboxItem } from '@osc/messaging';
import {
  type EngineEffect,
  type WorkflowExecution,
  type WorkflowSpec,
  newExecution,
  splitSubWorkflowInput,
} from '@osc/workflow-domain';
import { findExecutionIdOfTask, findWorkflowForRun, insertExecution } from '@osc/workflow-persistence';

/**
 * The commands that link a parent execution and its sub-workflows (DSL-13): a child's start, its
 * completion or rerun reported to the parent task, pause/resume/cancel passed down to a child or up
 * to the parent. Each is an engine command in the outbox of the transaction that decided it.
 */

type EffectOf<T extends EngineEffect['type']> = Extract<EngineEffect, { type: T }>;

const bus = (message: EngineCommandMessage): OutboxItem => ({
  destination: 'bus',
  queue: ENGINE_COMMAND_QUEUE,
  message,
});

/** The parent's `sub-workflow-completed` command, or nothing when the parent task is gone. */
export async function subWorkflowCompletedItems(
  em: EntityManager,
  e: EffectOf<'notify-parent'>,
): Promise<OutboxItem[]> {
  const parentId = await findExecutionIdOfTask(em, e.taskExecutionId);
  if (!parentId) return [];
  return [
    bus(
      engineCommand(`sub-workflow-completed:${e.subExecutionId}`, 'engine.sub-workflow-completed', {
        executionId: parentId,
        taskExecutionId: e.taskExecutionId,
        subExecutionId: e.subExecutionId,
        state: e.state,
        output: e.output,
        stateInfo: e.stateInfo,
      }),
    ),
  ];
}

/** The parent's `sub-workflow-rerun` command, or nothing when the parent task is gone. */
export async function subWorkflowRerunItems(
  em: EntityManager,
  e: EffectOf<'notify-parent-rerun'>,
  newId: () => string,
): Promise<OutboxItem[]> {
  const parentId = await findExecutionIdOfTask(em, e.taskExecutionId);
  if (!parentId) return [];
  return [
    bus(
      engineCommand(`sub-workflow-rerun:${e.subExecutionId}:${newId()}`, 'engine.sub-workflow-rerun', {
        executionId: parentId,
        taskExecutionId: e.taskExecutionId,
        subExecutionId: e.subExecutionId,
      }),
    ),
  ];
}

/** Pause, resume or cancel passed down to a sub-execution. */
export function subExecutionControlItems(
  e: EffectOf<'control-sub-execution'>,
  newId: () => string,
): OutboxItem[] {
  const id = `${e.command}:${e.subExecutionId}:${newId()}`;
  const msg =
    e.command === 'pause'
      ? engineCommand(id, 'engine.pause-execution', { executionId: e.subExecutionId })
      : e.command === 'resume'
        ? engineCommand(id, 'engine.resume-execution', { executionId: e.subExecutionId })
        : engineCommand(id, 'engine.cancel-execution', {
            executionId: e.subExecutionId,
            message: e.message ?? null,
          });
  return [bus(msg)];
}

/** A sub-execution's pause or resume passed up to its parent task, or nothing when that task is gone. */
export async function parentControlItems(
  em: EntityManager,
  ex: WorkflowExecution,
  e: EffectOf<'control-parent-execution'>,
  newId: () => string,
): Promise<OutboxItem[]> {
  const parentId = await findExecutionIdOfTask(em, e.taskExecutionId);
  if (!parentId) return [];
  // the parent task sees its sub-execution as its action moving to PAUSED or back to RUNNING
  const id = `${e.command}-up:${ex.id}:${newId()}`;
  return [
    bus(
      engineCommand(id, 'engine.action-state-changed', {
        executionId: parentId,
        taskExecutionId: e.taskExecutionId,
        actionExecutionId: e.subExecutionId,
        state: e.command === 'pause' ? 'PAUSED' : 'RUNNING',
      }),
    ),
  ];
}

/**
 * Creates the child execution row (id chosen by `decide`, so a redelivery inserts nothing twice) and
 * its start command; an unknown workflow or invalid input is reported back to the parent (DSL-13.6).
 */
export async function startSubWorkflow(
  em: EntityManager,
  parent: WorkflowExecution,
  e: EffectOf<'start-sub-workflow'>,
  now: () => Date,
): Promise<OutboxItem[]> {
  const namespace = String(e.params['namespace'] ?? parent.workflowNamespace);
  const visibility = { kind: 'project', projectId: parent.projectId } as const;
  const candidates = parent.workflowName.includes('.')
    ? [
        `${parent.workflowName.slice(0, parent.workflowName.lastIndexOf('.'))}.${e.workflowName}`,
        e.workflowName,
      ]
    : [e.workflowName];
  let stored = null;
  for (const name of candidates) {
    stored = await findWorkflowForRun(em, {
      identifier: name,
      namespace,
      projectId: parent.projectId,
      visibility,
    });
    if (stored) break;
  }
  const fail = (message: string): OutboxItem[] => [
    bus(
      engineCommand(`sub-workflow-start-failed:${e.subExecutionId}`, 'engine.sub-workflow-start-failed', {
        executionId: parent.id,
        taskExecutionId: e.taskExecutionId,
        message,
      }),
    ),
  ];
  if (!stored) return fail(`Failed to find workflow [name=${e.workflowName}] [namespace=${namespace}]`);
  const spec = stored.spec as WorkflowSpec;
  const { input, params } = splitSubWorkflowInput(spec, e.input);
  let child: WorkflowExecution;
  try {
    child = newExecution(
      {
        id: e.subExecutionId,
        spec,
        workflowId: stored.id,
        workflowNamespace: stored.namespace,
        projectId: parent.projectId,
        input,
        params: { ...e.params, ...params },
        taskExecutionId: e.taskExecutionId,
        rootExecutionId: e.rootExecutionId,
      },
      now(),
    );
  } catch (err) {
    if (err instanceof AppError) return fail(err.message);
    throw err;
  }
  await insertExecution(em, child, { parentExecutionId: parent.id });
  return [bus(engineCommand(`start:${child.id}`, 'engine.start-execution', { executionId: child.id }))];
}
