import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Param,
  Post,
  Put,
  Query,
  Req,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { InvalidInputError } from '@osc/errors';
import { Ctx, type RequestContext, requestBaseUrl } from '@osc/http-common';
import { type QueryBag, checkKnownParams, queryValue } from '../definitions/query-values';
import { parseNamespaceParam } from '../definitions/upload-params';
import { parseRunList, pickFields, runNextLink } from '../executions/run-list';
import { Authorize, WORKFLOW_POLICY } from '../policy/authorize';
import { WorkflowPolicy } from '../policy/workflow-policy';
import { CODE_SOURCE_LIST } from './code-source.views';
import { CodeSourcesService, type Scope } from './code-sources.service';

/** The module text of an upload: python-mistralclient sends it as `text/plain`. */
const contentOf = (body: unknown): string => {
  if (typeof body === 'string') return body;
  if (body === undefined || body === null) return '';
  throw new InvalidInputError('The code source must be sent as text (Content-Type: text/plain).');
};

/**
 * Query parameters of an upload: `name` (POST) or `identifier` (PUT), `namespace` (default ''),
 * `scope` (default private; public needs `code_sources:publicize`).
 */
function uploadParams(
  query: QueryBag,
  key: 'name' | 'identifier',
  ctx: RequestContext,
  policy: WorkflowPolicy,
): { key: string; namespace: string; scope: Scope } {
  checkKnownParams(query, [key, 'namespace', 'scope']);
  const value = queryValue(query, key);
  if (!value) throw new InvalidInputError(`Missing argument: "${key}"`);
  const scope = queryValue(query, 'scope') || 'private';
  if (scope !== 'private' && scope !== 'public') {
    throw new InvalidInputError(`Scope must be one of the following: private, public; actual: ${scope}`);
  }
  if (scope === 'public') policy.enforce('code_sources:publicize', ctx);
  const namespace = queryValue(query, 'namespace') ?? '';
  if (namespace.length > 255) throw new InvalidInputError('Namespace must be at most 255 characters.');
  return { key: value, namespace, scope };
}

/**
 * Mistral v2 `/v2/code_sources`: the module text travels as the raw `text/plain` body with name,
 * namespace and scope in the query (POST creates, PUT on the collection updates by `identifier`);
 * get and delete by id or name (`?namespace=`). Errors of the text endpoints are a bare faultstring.
 */
@Controller('v2/code_sources')
export class CodeSourcesController {
  constructor(
    private readonly codeSources: CodeSourcesService,
    @Inject(WORKFLOW_POLICY) private readonly policy: WorkflowPolicy,
  ) {}

  @Post()
  @Authorize('code_sources:create', 'text')
  @HttpCode(201)
  create(
    @Ctx() ctx: RequestContext,
    @Query() query: QueryBag,
    @Body() body: unknown,
    @Req() req: FastifyRequest,
  ) {
    req.mistralErrorShape = 'text';
    const p = uploadParams(query, 'name', ctx, this.policy);
    return this.codeSources.create(
      ctx,
      { name: p.key, namespace: p.namespace, scope: p.scope },
      contentOf(body),
    );
  }

  @Put()
  @Authorize('code_sources:update', 'text')
  update(
    @Ctx() ctx: RequestContext,
    @Query() query: QueryBag,
    @Body() body: unknown,
    @Req() req: FastifyRequest,
  ) {
    req.mistralErrorShape = 'text';
    const p = uploadParams(query, 'identifier', ctx, this.policy);
    return this.codeSources.update(
      ctx,
      { identifier: p.key, namespace: p.namespace, scope: p.scope },
      contentOf(body),
    );
  }

  @Get()
  @Authorize('code_sources:list')
  async list(@Ctx() ctx: RequestContext, @Query() query: QueryBag, @Req() req: FastifyRequest) {
    const list = parseRunList(CODE_SOURCE_LIST, query, ctx, this.policy);
    const codeSources = (await this.codeSources.list(ctx, list)).map((c) => pickFields(c, list.fields));
    const next = runNextLink(requestBaseUrl(req), CODE_SOURCE_LIST, list, codeSources);
    return next ? { code_sources: codeSources, next } : { code_sources: codeSources };
  }

  @Get(':identifier')
  @Authorize('code_sources:get')
  get(@Ctx() ctx: RequestContext, @Param('identifier') identifier: string, @Query() query: QueryBag) {
    return this.codeSources.get(ctx, identifier, parseNamespaceParam(query));
  }

  @Delete(':identifier')
  @Authorize('code_sources:delete')
  @HttpCode(204)
  async delete(
    @Ctx() ctx: RequestContext,
    @Param('identifier') identifier: string,
    @Query() query: QueryBag,
  ): Promise<void> {
    await this.codeSources.delete(ctx, identifier, parseNamespaceParam(query));
  }
}
