import { Controller, Get, Headers, Inject, Param, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Ctx, type RequestContext, requestBaseUrl } from '@osc/http-common';
import { type StoredExecutionEvent, listExecutionEvents } from '@osc/workflow-persistence';
import { type QueryBag, checkKnownParams, invalidField, queryValue } from '../definitions/query-values';
import { Authorize } from '../policy/authorize';
import { ExecutionEventHub } from './execution-event-hub';
import { ExecutionsService } from './executions.service';
import { openSse, wantsStream } from './sse';

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;
const TERMINAL = new Set(['SUCCESS', 'ERROR', 'CANCELLED']);

const nonNegative = (
  name: string,
  raw: string | undefined,
  fallback: number,
  max = Number.MAX_SAFE_INTEGER,
): number => {
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw invalidField(name, raw, 'must be a non-negative integer');
  return Math.min(Number(raw.trim()), max);
};

/**
 * Execution event history, our extension of the Mistral API (docs/workflow-events.md):
 * `GET /v2/executions/{id}/events` as a JSON page (`marker` = the last `seq` seen, `limit`), or with
 * `Accept: text/event-stream` as Server-Sent Events that resume after `Last-Event-ID` and end after
 * the execution's terminal entry. Same policy and project scoping as `GET /v2/executions/{id}`.
 */
@Controller('v2/executions')
export class ExecutionEventsController {
  constructor(
    private readonly executions: ExecutionsService,
    @Inject(ExecutionEventHub) private readonly hub: ExecutionEventHub,
  ) {}

  @Get(':id/events')
  @Authorize('executions:get')
  async events(
    @Ctx() ctx: RequestContext,
    @Param('id') id: string,
    @Query() query: QueryBag,
    @Headers('accept') accept: string | undefined,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    checkKnownParams(query, ['marker', 'limit']);
    const marker = nonNegative('marker', queryValue(query, 'marker'), 0);
    const row = await this.executions.findRow(ctx, id);
    const execution = {
      id: String(row['id']),
      rootExecutionId: (row['root_execution_id'] as string | null) ?? null,
    };
    if (wantsStream(accept)) {
      const after = nonNegative('Last-Event-ID', lastEventId, marker);
      // a finished execution whose history the client has read to the end: nothing will come
      const finished =
        TERMINAL.has(String(row['state'])) &&
        (await listExecutionEvents(this.executions.db, execution, after, 1)).length === 0;
      this.stream(execution, after, req, reply, finished);
      return;
    }
    const limit = Math.max(1, nonNegative('limit', queryValue(query, 'limit'), DEFAULT_LIMIT, MAX_LIMIT));
    const events = await listExecutionEvents(this.executions.db, execution, marker, limit);
    const last = events.at(-1);
    const body: Record<string, unknown> = { events };
    if (events.length === limit && last)
      body['next'] = `${requestBaseUrl(req)}/v2/executions/${id}/events?marker=${last.seq}&limit=${limit}`;
    await reply.code(200).type('application/json').send(body);
  }

  private stream(
    execution: { id: string; rootExecutionId: string | null },
    after: number,
    req: FastifyRequest,
    reply: FastifyReply,
    finished: boolean,
  ): void {
    let stop = (): void => undefined;
    const sse = openSse(req, reply, () => stop());
    if (finished) {
      sse.close();
      return;
    }
    stop = this.hub.watch({
      after,
      execution,
      deliver: (events: StoredExecutionEvent[]) => {
        if (!sse.open) return;
        sse.send(events.map((e) => ({ id: e.seq, event: e.subject, data: e })));
        if (
          events.some(
            (e) => e.subject === 'execution' && e.execution_id === execution.id && TERMINAL.has(e.state),
          )
        )
          sse.close();
      },
    });
  }
}
