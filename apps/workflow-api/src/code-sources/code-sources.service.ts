import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { checkCodeSource, resolveActionsConfig } from '@osc/actions';
import { ForbiddenError, NotFoundError } from '@osc/errors';
import type { RequestContext } from '@osc/http-common';
import { CLOCK, type Clock, DATA_SOURCE } from '@osc/platform';
import {
  type CodeSourceRecord,
  codeSourceDuplicateMessage,
  deleteCodeSource,
  findCodeSource,
  insertCodeSource,
  toSeconds,
  updateCodeSource,
} from '@osc/workflow-persistence';
import { NAME_MAX, checkLength, rejectNul, translateDbError } from '../definitions/db-errors';
import { type RunListRequest, runList } from '../executions/run-list';
import { CODE_SOURCE_LIST, codeSourceRowView, codeSourceView } from './code-source.views';

export type Scope = 'private' | 'public';

/** Limits of the upload check (compile only): the sandbox defaults of std.javascript. */
const CHECK_LIMITS = resolveActionsConfig().javascript;

/** Mistral's not-found text of `get_code_source`. */
export const codeSourceNotFound = (identifier: string, namespace: string): NotFoundError =>
  new NotFoundError(
    'CodeSource',
    identifier,
    `Code Source not found [name=${identifier},namespace=${namespace}]`,
  );

/**
 * Code sources (Mistral's `/v2/code_sources`): JavaScript modules, unique per (name, namespace,
 * project), found by id or by name in one namespace among the caller's own and the public ones.
 * Content is checked at upload (it must compile as an ES module) and every update bumps `version`.
 * Public code sources of other projects are read-only (403 on change) except for admins.
 */
@Injectable()
export class CodeSourcesService {
  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** POST /v2/code_sources?name=&namespace=&scope= with the module text → 201. */
  async create(
    ctx: RequestContext,
    params: { name: string; namespace: string; scope: Scope },
    content: string,
  ): Promise<Record<string, unknown>> {
    checkLength('name', params.name, NAME_MAX.definition);
    rejectNul('A code source', params.name, params.namespace, content);
    await checkCodeSource(params.name, content, CHECK_LIMITS);
    const created = await this.guard(
      codeSourceDuplicateMessage(params.name, params.namespace, ctx.projectId),
      () =>
        insertCodeSource(this.db, {
          name: params.name,
          namespace: params.namespace,
          content,
          scope: params.scope,
          projectId: ctx.projectId,
          createdAt: toSeconds(this.clock.now()),
        }),
    );
    return codeSourceView(created);
  }

  /** PUT /v2/code_sources?identifier=&namespace=&scope= with the new text: content and scope change, version + 1. */
  async update(
    ctx: RequestContext,
    params: { identifier: string; namespace: string; scope: Scope },
    content: string,
  ): Promise<Record<string, unknown>> {
    rejectNul('A code source', params.identifier, params.namespace, content);
    const updated = await this.db.transaction(async (em) => {
      const found = this.owned(
        ctx,
        await findCodeSource(em, params.identifier, params.namespace, ctx.projectId, { lock: true }),
        params,
      );
      await checkCodeSource(found.name, content, CHECK_LIMITS);
      return updateCodeSource(em, found.id, { content, scope: params.scope }, toSeconds(this.clock.now()));
    });
    return codeSourceView(updated);
  }

  async get(ctx: RequestContext, identifier: string, namespace: string): Promise<Record<string, unknown>> {
    const found = await findCodeSource(this.db, identifier, namespace, ctx.projectId);
    if (!found) throw codeSourceNotFound(identifier, namespace);
    return codeSourceView(found);
  }

  /** Own code sources and public ones of other projects (Mistral's secure query); all with all_projects. */
  async list(ctx: RequestContext, req: RunListRequest): Promise<Record<string, unknown>[]> {
    return (
      await runList(this.db, CODE_SOURCE_LIST, { ...req, publicToo: ctx.projectId, markerPublicToo: true })
    ).map(codeSourceRowView);
  }

  /** DELETE /v2/code_sources/{identifier}?namespace= → 204; its dynamic actions go with it (Mistral's cascade). */
  async delete(ctx: RequestContext, identifier: string, namespace: string): Promise<void> {
    await this.db.transaction(async (em) => {
      const found = this.owned(
        ctx,
        await findCodeSource(em, identifier, namespace, ctx.projectId, { lock: true }),
        {
          identifier,
          namespace,
        },
      );
      await deleteCodeSource(em, found.id);
    });
  }

  private owned(
    ctx: RequestContext,
    c: CodeSourceRecord | null,
    ref: { identifier: string; namespace: string },
  ): CodeSourceRecord {
    if (!c) throw codeSourceNotFound(ref.identifier, ref.namespace);
    if (!ctx.isAdmin && c.projectId !== ctx.projectId) {
      throw new ForbiddenError(`Can not access CodeSource resource of other projects, ID: ${c.id}`);
    }
    return c;
  }

  private async guard<R>(conflict: string, fn: () => Promise<R>): Promise<R> {
    try {
      return await fn();
    } catch (err) {
      throw translateDbError(err, conflict);
    }
  }
}
