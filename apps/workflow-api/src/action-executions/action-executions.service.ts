import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { ENGINE_COMMAND_QUEUE, type EngineCommandMessage, engineCommand } from '@osc/contracts';
import { ForbiddenError, InvalidInputError, NotFoundError } from '@osc/errors';
import type { RequestContext } from '@osc/http-common';
import type { OutboxWriter } from '@osc/messaging';
import { DATA_SOURCE, OUTBOX_WRITER } from '@osc/platform';
import { isCompleted } from '@osc/workflow-domain';
import { type RunListRequest, type RunListSpec, runList } from '../executions/run-list';
import { type Row, actionExecutionView } from '../executions/run-views';

const APPLY_WAIT_MS = 10_000;
const PUT_STATES = ['SUCCESS', 'ERROR', 'CANCELLED', 'PAUSED', 'RUNNING'];

/** Action executions: read, and completion of asynchronous actions (std.async_noop, std.mistral_http). */
@Injectable()
export class ActionExecutionsService {
  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
  ) {}

  async findRow(ctx: RequestContext, id: string): Promise<Row> {
    const rows: Row[] = await this.db.query(
      `SELECT * FROM "action_executions" WHERE "id"::text = $1 ${ctx.isAdmin ? '' : 'AND "project_id" = $2'}`,
      ctx.isAdmin ? [id] : [id, ctx.projectId],
    );
    if (!rows[0]) throw new NotFoundError('ActionExecution', id, `ActionExecution not found [id=${id}]`);
    return rows[0];
  }

  async get(ctx: RequestContext, id: string): Promise<Row> {
    return actionExecutionView(await this.findRow(ctx, id), { includeOutput: true });
  }

  async list(spec: RunListSpec, req: RunListRequest, includeOutput: boolean): Promise<Row[]> {
    return (await runList(this.db, spec, req)).map((r) => actionExecutionView(r, { includeOutput: includeOutput || req.fields.includes('output') }));
  }

  /** PUT /v2/action_executions/{id}: `{state, output}` completes, pauses or resumes an async action. */
  async update(ctx: RequestContext, id: string, body: Record<string, unknown>): Promise<Row> {
    const row = await this.findRow(ctx, id);
    if (row['project_id'] !== ctx.projectId && !ctx.isAdmin) {
      throw new ForbiddenError(`Can not access ActionExecution resource of other projects, ID: ${id}`);
    }
    const state = body['state'];
    if (typeof state !== 'string' || !PUT_STATES.includes(state)) {
      throw new InvalidInputError(`Invalid input for field/attribute state. Value: '${String(state)}'. Value should be one of: ${PUT_STATES.join(', ')}`);
    }
    let output = body['output'];
    if (typeof output === 'string') {
      try {
        output = JSON.parse(output);
      } catch {
        // a plain string result
      }
    }
    if (isCompleted(String(row['state']))) {
      throw new InvalidInputError(`Action execution ${id} is already in ${String(row['state'])} state.`);
    }
    const executionId = row['workflow_execution_id'] as string | null;
    const taskExecutionId = row['task_execution_id'] as string | null;
    if (!executionId || !taskExecutionId) throw new InvalidInputError(`Action execution ${id} does not belong to a workflow.`);
    let cmd: EngineCommandMessage;
    if (state === 'PAUSED' || state === 'RUNNING') {
      cmd = engineCommand(`action-state:${id}:${state}:${Date.now()}`, 'engine.action-state-changed', {
        executionId,
        taskExecutionId,
        actionExecutionId: id,
        state,
      });
    } else {
      const s = state as 'SUCCESS' | 'ERROR' | 'CANCELLED';
      cmd = engineCommand(`action-completed:${id}`, 'engine.action-completed', {
        executionId,
        taskExecutionId,
        actionExecutionId: id,
        state: s,
        ...(s === 'SUCCESS' ? { result: output ?? null } : {}),
        ...(s === 'ERROR' ? { error: output === undefined || output === null ? 'Unknown error' : output } : {}),
      });
    }
    await this.db.transaction((em) => this.outbox.add(em, { destination: 'bus', queue: ENGINE_COMMAND_QUEUE, message: cmd }));
    const deadline = Date.now() + APPLY_WAIT_MS;
    let delay = 5;
    while (Date.now() < deadline) {
      const r: { state: string }[] = await this.db.query(`SELECT "state" FROM "action_executions" WHERE "id" = $1`, [id]);
      if (!r[0] || r[0].state === state) break;
      await new Promise((res) => setTimeout(res, delay));
      delay = Math.min(delay * 2, 100);
    }
    return this.get(ctx, id);
  }
}
