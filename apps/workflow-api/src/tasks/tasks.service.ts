import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { ENGINE_COMMAND_QUEUE, engineCommand } from '@osc/contracts';
import { ForbiddenError, InvalidInputError, NotFoundError } from '@osc/errors';
import type { RequestContext } from '@osc/http-common';
import type { OutboxWriter } from '@osc/messaging';
import { DATA_SOURCE, OUTBOX_WRITER } from '@osc/platform';
import { CONTROL_REQUEST } from '@osc/workflow-domain';
import {
  claimTaskForControl,
  findTaskExecutionRow,
  lockWorkflowExecutionState,
  readTaskExecutionProgress,
  readWorkflowExecutionState,
} from '@osc/workflow-persistence';
import { isCanonicalUuid } from '../definitions/list-params';
import { type RunListRequest, type RunListSpec, runList } from '../executions/run-list';
import { type Row, TASK_LIST_COLUMNS, taskView } from '../executions/run-views';

const APPLY_WAIT_MS = 10_000;

/** Task executions: read, and rerun/skip through engine commands (DSL-15.6, 15.7). */
@Injectable()
export class TasksService {
  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
  ) {}

  async findRow(ctx: RequestContext, id: string): Promise<Row> {
    if (!isCanonicalUuid(id))
      throw new NotFoundError('TaskExecution', id, `TaskExecution not found [id=${id}]`);
    const row = await findTaskExecutionRow(this.db, id, ctx.isAdmin ? null : ctx.projectId);
    if (!row) throw new NotFoundError('TaskExecution', id, `TaskExecution not found [id=${id}]`);
    return row;
  }

  async get(ctx: RequestContext, id: string): Promise<Row> {
    return taskView(await this.findRow(ctx, id), { detail: true });
  }

  async list(spec: RunListSpec, req: RunListRequest): Promise<Row[]> {
    return (await runList(this.db, spec, req, TASK_LIST_COLUMNS)).map((r) => taskView(r, { detail: false }));
  }

  /** PUT /v2/tasks/{id}: `state` RUNNING (+ `reset`) reruns a task in ERROR; SKIPPED skips it. */
  async update(ctx: RequestContext, id: string, body: Record<string, unknown>): Promise<Row> {
    const row = await this.findRow(ctx, id);
    if (row['project_id'] !== ctx.projectId && !ctx.isAdmin) {
      throw new ForbiddenError(`Can not access TaskExecution resource of other projects, ID: ${id}`);
    }
    const state = body['state'];
    const reset = body['reset'];
    let env = body['env'];
    if (typeof env === 'string') {
      try {
        env = JSON.parse(env);
      } catch {
        throw new InvalidInputError(`Invalid input for field/attribute env. Value: '${env}'. Invalid JSON`);
      }
    }
    if (env !== undefined && env !== null && (typeof env !== 'object' || Array.isArray(env))) {
      throw new InvalidInputError(
        `Invalid input for field/attribute env. Value: '${JSON.stringify(env)}'. Value should be a dict`,
      );
    }
    if (state !== 'RUNNING' && state !== 'SKIPPED') {
      throw new InvalidInputError(
        `Invalid task state: ${String(state)}. Only RUNNING (rerun) and SKIPPED (skip) can be requested.`,
      );
    }
    if (row['state'] !== 'ERROR') {
      throw new InvalidInputError(
        `Task execution ${id} is in ${String(row['state'])} state: only a task in ERROR can be ${state === 'RUNNING' ? 'rerun' : 'skipped'}.`,
      );
    }
    const executionId = String(row['workflow_execution_id']);
    if ((await readWorkflowExecutionState(this.db, executionId)) === 'PAUSED') {
      throw new InvalidInputError(
        `Cannot rerun or skip a task of a paused workflow execution [execution_id=${executionId}]`,
      );
    }
    let cmd;
    if (state === 'RUNNING') {
      if (typeof reset !== 'boolean') throw new InvalidInputError('Reset field is mandatory to rerun task.');
      const wi = (
        typeof row['runtime_context'] === 'string'
          ? JSON.parse(row['runtime_context'])
          : row['runtime_context']
      ) as Record<string, unknown>;
      if (!reset && !wi?.['with_items'])
        throw new InvalidInputError('Only with-items task has the option to not reset.');
      cmd = engineCommand(`rerun:${id}:${randomUUID()}`, 'engine.rerun-task', {
        executionId,
        taskExecutionId: id,
        reset,
        ...(env ? { env: env as Record<string, unknown> } : {}),
      });
    } else {
      cmd = engineCommand(`skip:${id}:${randomUUID()}`, 'engine.skip-task', {
        executionId,
        taskExecutionId: id,
      });
    }
    const stamp = (v: unknown): number =>
      v === null || v === undefined ? 0 : new Date(v as string | Date).getTime();
    const before = stamp(row['updated_at']);
    await this.db.transaction(async (em) => {
      // Claim the task under the execution's row lock (the engine holds the same lock while it
      // decides): of two concurrent requests only one finds it in ERROR and unclaimed; the engine
      // releases the claim when it handles the command.
      const lockedState = await lockWorkflowExecutionState(em, executionId);
      // Mistral: the env of an execution changes only while it is IDLE, PAUSED or ERROR (DSL-15.6)
      const envChange = env !== undefined && env !== null && Object.keys(env).length > 0;
      if (envChange && !['IDLE', 'PAUSED', 'ERROR'].includes(lockedState ?? '')) {
        throw new ForbiddenError(
          'Updating env to workflow execution is only permitted if it is in IDLE, PAUSED, or ERROR state.',
        );
      }
      if (!(await claimTaskForControl(em, id, CONTROL_REQUEST, cmd.id))) {
        throw new InvalidInputError(
          `Task execution ${id} already has a rerun or skip in progress or is no longer in ERROR state.`,
        );
      }
      await this.outbox.add(em, { destination: 'bus', queue: ENGINE_COMMAND_QUEUE, message: cmd });
    });
    const deadline = Date.now() + APPLY_WAIT_MS;
    let delay = 5;
    while (Date.now() < deadline) {
      const r = await readTaskExecutionProgress(this.db, id);
      // applied: the task left ERROR, or it was updated since (a rerun that failed again at once)
      if (!r || r.state !== 'ERROR' || stamp(r.updated_at) !== before) break;
      await new Promise((res) => setTimeout(res, delay));
      delay = Math.min(delay * 2, 100);
    }
    return this.get(ctx, id);
  }
}
