import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DataSource } from 'typeorm';
import type { RequestContext } from '@osc/http-common';
import { DATA_SOURCE } from '@osc/platform';
import { type StoredExecutionStateChange, settledStreamPosition } from '@osc/workflow-persistence';
import {
  type QueryBag,
  checkKnownParams,
  invalidField,
  parseBool,
  queryValue,
} from '../definitions/query-values';
import { WORKFLOW_POLICY } from '../policy/authorize';
import { WorkflowPolicy } from '../policy/workflow-policy';
import { ExecutionEventHub } from './execution-event-hub';
import { openSse } from './sse';

const position = (name: string, raw: string | undefined): number | undefined => {
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d{1,15}$/.test(raw.trim()))
    throw invalidField(name, raw, 'must be a stream position (a non-negative integer)');
  return Number(raw.trim());
};

/**
 * The project-wide stream of execution state changes, our extension (docs/workflow-events.md):
 * `GET /v2/executions` with `Accept: text/event-stream`. Same policy and scoping as the list
 * (`executions:list`; `all_projects=true` needs `executions:list:all_projects`, as the list does).
 * `id:` is the stream position: `Last-Event-ID` (or `?marker=`) resumes after it without gap or
 * duplicate; a new stream first says where it starts (`event: position`) and follows from there.
 */
@Injectable()
export class ExecutionStateStream {
  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(ExecutionEventHub) private readonly hub: ExecutionEventHub,
    @Inject(WORKFLOW_POLICY) private readonly policy: WorkflowPolicy,
  ) {}

  async open(
    ctx: RequestContext,
    query: QueryBag,
    lastEventId: string | undefined,
    req: FastifyRequest,
    reply: FastifyReply,
  ): Promise<void> {
    checkKnownParams(query, ['all_projects', 'marker']);
    const all = queryValue(query, 'all_projects');
    const allProjects = all !== undefined && parseBool('all_projects', all);
    if (allProjects) this.policy.enforce('executions:list:all_projects', ctx);
    const after =
      position('Last-Event-ID', lastEventId) ??
      position('marker', queryValue(query, 'marker')) ??
      (await settledStreamPosition(this.db));
    let stop = (): void => undefined;
    const sse = openSse(req, reply, () => stop());
    sse.send([{ id: after, event: 'position', data: { position: after } }]);
    stop = this.hub.watchProject({
      projectId: allProjects ? null : ctx.projectId,
      after,
      deliver: (changes: StoredExecutionStateChange[]) =>
        sse.send(changes.map((c) => ({ id: c.position, event: 'execution', data: c }))),
    });
  }
}
