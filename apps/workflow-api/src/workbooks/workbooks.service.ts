import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { ConflictError, InvalidInputError, NotFoundError } from '@osc/errors';
import type { RequestContext } from '@osc/http-common';
import { CLOCK, type Clock, DATA_SOURCE } from '@osc/platform';
import { runInTransaction } from '@osc/persistence';
import {
  type WorkbookSpec,
  actionInputString,
  parseWorkbook,
  pyJsonDumps,
  renderInputString,
  workbookMemberDefinitions,
  workflowInterface,
} from '@osc/workflow-domain';
import {
  type ColumnValues,
  type DefinitionRow,
  type SqlRunner,
  ACTION_DEFINITIONS,
  WORKBOOKS,
  WORKFLOW_DEFINITIONS,
  deleteDefinition,
  findDefinition,
  insertDefinition,
  type JsonPage,
  toSeconds,
  updateDefinition,
  upsertDefinition,
} from '@osc/workflow-persistence';
import { checkOwner, visibilityOf } from '../definitions/access';
import { NAME_MAX, checkLength, rejectNul } from '../definitions/db-errors';
import { definitionChecksum } from '../definitions/definition-text';
import type { ListRequest } from '../definitions/list-params';
import type { UploadParams } from '../definitions/upload-params';
import { dbGuarded, listDefinitionPage, validateDefinitionText } from '../definitions/definition-pages';
import { isStandardActionName } from '../actions/system-actions';

const T = WORKBOOKS;

const duplicate = (name: string, namespace: string, projectId: string) =>
  `Duplicate entry for WorkbookDefinition ['name', 'namespace', 'project_id']: ${name}, ${namespace}, ${projectId}`;

/**
 * Workbooks: one document holding workflows and actions stored as `<workbook>.<name>` in the same
 * namespace, scope and project. Creating or updating a workbook creates or updates its members;
 * members dropped from the document and the members of a deleted workbook stay (DSL-7.4, as the
 * reference does).
 */
@Injectable()
export class WorkbooksService {
  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async create(ctx: RequestContext, text: string, params: UploadParams): Promise<DefinitionRow> {
    const wb = parseWorkbook(text, { validate: params.validate });
    this.check(text, wb);
    const at = toSeconds(this.clock.now()).toISOString();
    return this.tx(duplicate(wb.name, params.namespace, ctx.projectId), async (em) => {
      const row = await insertDefinition(em, T, {
        ...this.values(text, wb, params),
        namespace: { value: params.namespace },
        project_id: { value: ctx.projectId },
        created_at: { value: at, kind: 'timestamp' },
      });
      if (!row) throw new ConflictError(duplicate(wb.name, params.namespace, ctx.projectId));
      await this.storeMembers(em, text, wb, params, ctx.projectId, at);
      return row;
    });
  }

  /** The workbook is identified by the name inside the document (in `namespace`). */
  async update(ctx: RequestContext, text: string, params: UploadParams): Promise<DefinitionRow> {
    const wb = parseWorkbook(text, { validate: params.validate });
    this.check(text, wb);
    const at = toSeconds(this.clock.now()).toISOString();
    return this.tx(duplicate(wb.name, params.namespace, ctx.projectId), async (em) => {
      const current = await findDefinition(em, T, {
        identifier: wb.name,
        identifierIsId: false,
        namespaces: [params.namespace],
        visibility: visibilityOf(ctx),
        callerProjectId: ctx.projectId,
        forUpdate: true,
      });
      if (!current) throw workbookNotFound('name', wb.name, params.namespace);
      checkOwner(ctx, T, current);
      const row = await updateDefinition(em, T, String(current.id), {
        ...this.values(text, wb, params),
        updated_at: { value: at, kind: 'timestamp' },
      });
      if (!row) throw workbookNotFound('name', wb.name, params.namespace);
      await this.storeMembers(em, text, wb, params, String(current.project_id), at);
      return row;
    });
  }

  async get(
    ctx: RequestContext,
    name: string,
    namespace: string,
    fields: readonly string[],
  ): Promise<DefinitionRow> {
    const row = await this.guard(() =>
      findDefinition(this.db, T, {
        identifier: name,
        identifierIsId: false,
        namespaces: [namespace],
        visibility: visibilityOf(ctx),
        callerProjectId: ctx.projectId,
        fields,
      }),
    );
    if (!row) throw workbookNotFound('name', name, namespace);
    return row;
  }

  async delete(ctx: RequestContext, name: string, namespace: string): Promise<void> {
    await this.tx('', async (em) => {
      const row = await findDefinition(em, T, {
        identifier: name,
        identifierIsId: false,
        namespaces: [namespace],
        visibility: visibilityOf(ctx),
        callerProjectId: ctx.projectId,
        fields: ['id', 'project_id'],
        forUpdate: true,
      });
      if (!row) throw workbookNotFound('workbook_name', name, namespace);
      checkOwner(ctx, T, row);
      await deleteDefinition(em, T, String(row.id));
    });
  }

  list(req: ListRequest): Promise<JsonPage> {
    return listDefinitionPage(
      this.db,
      T,
      req,
      (marker) => new NotFoundError('Workbook', marker, `Workbook not found [id=${marker}]`),
    );
  }

  validate(text: string): { valid: true } | { valid: false; error: string } {
    return validateDefinitionText(parseWorkbook, text);
  }

  private check(text: string, wb: WorkbookSpec): void {
    rejectNul('The workbook definition', text, wb);
    // The workbook's own name and the `<workbook>.<name>` names its workflows and actions are stored under.
    for (const name of [wb.name, ...wb.workflows.map((w) => w.name), ...wb.actions.map((x) => x.name)])
      checkLength('name', name, NAME_MAX.definition);
    for (const a of wb.actions) {
      if (isStandardActionName(a.name))
        throw new InvalidInputError(`Attempt to modify a system action: ${a.name}`);
    }
  }

  private values(text: string, wb: WorkbookSpec, params: UploadParams): ColumnValues {
    return {
      name: { value: wb.name },
      definition: { value: text },
      spec: { value: wb, kind: 'json' },
      tags: { value: wb.tags, kind: 'json' },
      scope: { value: params.scope },
    };
  }

  /** Creates or updates every member under the workbook's owner, namespace and scope. */
  private async storeMembers(
    em: SqlRunner,
    text: string,
    wb: WorkbookSpec,
    params: UploadParams,
    projectId: string,
    at: string,
  ): Promise<void> {
    const texts = workbookMemberDefinitions(text, wb);
    const owner = {
      namespace: { value: params.namespace },
      project_id: { value: projectId },
      scope: { value: params.scope },
      workbook_name: { value: wb.name },
    };
    for (const wf of wb.workflows) {
      const definition = texts.workflows[wf.name] ?? '';
      await upsertDefinition(
        em,
        WORKFLOW_DEFINITIONS,
        {
          ...owner,
          name: { value: wf.name },
          definition: { value: definition },
          checksum: { value: definitionChecksum(definition) },
          spec: { value: wf, kind: 'json' },
          input: { value: renderInputString(wf.input) },
          interface: { value: pyJsonDumps(workflowInterface(wf)) },
          tags: { value: wf.tags, kind: 'json' },
        },
        { created_at: { value: at, kind: 'timestamp' } },
        { updated_at: { value: at, kind: 'timestamp' } },
      );
    }
    for (const action of wb.actions) {
      await upsertDefinition(
        em,
        ACTION_DEFINITIONS,
        {
          ...owner,
          name: { value: action.name },
          definition: { value: texts.actions[action.name] ?? '' },
          description: { value: action.description ?? null },
          input: { value: actionInputString(action) },
          spec: { value: action, kind: 'json' },
          tags: { value: action.tags, kind: 'json' },
        },
        { created_at: { value: at, kind: 'timestamp' } },
        { updated_at: { value: at, kind: 'timestamp' } },
      );
    }
  }

  private tx<R>(conflict: string, fn: (em: SqlRunner) => Promise<R>): Promise<R> {
    return this.guard(() => runInTransaction(this.db, (em) => fn(em)), conflict);
  }

  private guard<R>(fn: () => Promise<R>, conflict = 'Duplicate entry for WorkbookDefinition'): Promise<R> {
    return dbGuarded(conflict, fn);
  }
}

export const workbookNotFound = (key: 'name' | 'workbook_name', name: string, namespace: string) =>
  new NotFoundError('Workbook', name, `Workbook not found [${key}=${name}, namespace=${namespace}]`);
