import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { InvalidInputError, NotFoundError } from '@osc/errors';
import type { RequestContext } from '@osc/http-common';
import { CLOCK, type Clock, DATA_SOURCE } from '@osc/platform';
import { type PlaygroundOutcome, evaluatePlayground, expressionScope } from '@osc/workflow-domain';
import { readSnapshot } from '@osc/workflow-persistence';
import { WORKFLOW_POLICY } from '../policy/authorize';
import { WorkflowPolicy } from '../policy/workflow-policy';
import { ExecutionsService } from './executions.service';

/** Longest expression text accepted (a playground, not a definition). */
export const MAX_EXPRESSION_LENGTH = 10_000;
const LANGUAGES = ['yaql', 'jinja'] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The expression playground, our extension (docs/workflow-events.md): evaluates a YAQL or Jinja
 * expression against an execution's real data as the engine would give it to one of its tasks.
 * Policy `executions:evaluate` (owner or admin by default) is judged against the execution's
 * project; an execution of another project is not found (404), as for GET.
 */
@Injectable()
export class ExpressionPlaygroundService {
  constructor(
    private readonly executions: ExecutionsService,
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(WORKFLOW_POLICY) private readonly policy: WorkflowPolicy,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async evaluate(
    ctx: RequestContext,
    id: string,
    body: Record<string, unknown>,
  ): Promise<PlaygroundOutcome & { task_execution_id: string | null }> {
    const unknown = Object.keys(body).filter(
      (k) => !['expression', 'language', 'task_execution_id'].includes(k),
    );
    if (unknown.length > 0)
      throw new InvalidInputError(`Unknown attribute for the evaluation: ${unknown.join(', ')}`);
    const expression = body['expression'];
    if (typeof expression !== 'string' || expression.trim() === '')
      throw new InvalidInputError('expression must be a non-empty string.');
    if (expression.length > MAX_EXPRESSION_LENGTH)
      throw new InvalidInputError(`expression is longer than ${MAX_EXPRESSION_LENGTH} characters.`);
    const language = body['language'] ?? 'yaql';
    if (!LANGUAGES.includes(language as (typeof LANGUAGES)[number]))
      throw new InvalidInputError(`language must be one of: ${LANGUAGES.join(', ')}.`);
    const taskId = body['task_execution_id'] ?? null;
    if (taskId !== null && (typeof taskId !== 'string' || !UUID.test(taskId)))
      throw new InvalidInputError('task_execution_id must be a task execution id (a UUID).');

    const row = await this.executions.findRow(ctx, id);
    this.policy.enforce('executions:evaluate', ctx, { project_id: String(row['project_id']) });
    const snapshot = await readSnapshot(this.db, String(row['id']));
    if (!snapshot) throw new NotFoundError('Execution', id, `Execution not found [id=${id}]`);
    const task = taskId === null ? null : (snapshot.tasks.find((t) => t.id === taskId) ?? null);
    if (taskId !== null && !task)
      throw new NotFoundError(
        'TaskExecution',
        taskId,
        `Task execution not found in execution ${id} [id=${taskId}]`,
      );
    const outcome = evaluatePlayground(
      expression,
      language as (typeof LANGUAGES)[number],
      expressionScope(snapshot, task, this.clock.now(), randomUUID),
    );
    return { ...outcome, task_execution_id: task?.id ?? null };
  }
}
