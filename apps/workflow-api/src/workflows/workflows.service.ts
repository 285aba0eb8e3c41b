import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { ConflictError, InvalidInputError, NotFoundError } from '@osc/errors';
import type { RequestContext } from '@osc/http-common';
import { CLOCK, type Clock, DATA_SOURCE } from '@osc/platform';
import { runInTransaction } from '@osc/persistence';
import {
  type ParsedWorkflows,
  parseWorkflows,
  pyJsonDumps,
  renderInputString,
  workflowInterface,
} from '@osc/workflow-domain';
import {
  type ColumnValues,
  type DefinitionRow,
  type SqlRunner,
  WORKFLOW_DEFINITIONS,
  deleteDefinition,
  findDefinition,
  insertDefinition,
  type JsonPage,
  nameTaken,
  toSeconds,
  updateDefinition,
} from '@osc/workflow-persistence';
import { checkOwner, visibilityOf } from '../definitions/access';
import { definitionChecksum } from '../definitions/definition-text';
import { NAME_MAX, checkLength, rejectNul } from '../definitions/db-errors';
import { type ListRequest, isUuid } from '../definitions/list-params';
import type { UploadParams } from '../definitions/upload-params';
import { dbGuarded, listDefinitionPage, validateDefinitionText } from '../definitions/definition-pages';
import { toWriteResponse } from './workflow.mapper';
import { WorkflowDeleteGuards } from './workflow-delete-guards';

const T = WORKFLOW_DEFINITIONS;

const duplicate = (name: string, namespace: string, projectId: string) =>
  `Duplicate entry for WorkflowDefinition ['name', 'namespace', 'project_id']: ${name}, ${namespace}, ${projectId}`;

export const workflowNotFound = (identifier: string, namespace: string) =>
  new NotFoundError(
    'Workflow',
    identifier,
    `Workflow not found [workflow_identifier=${identifier}, namespace=${namespace}]`,
  );

/** Column values of one parsed workflow (definition text, checksum, spec and rendered views). */
const workflowValues = (parsed: ParsedWorkflows, index: number, scope: string, now: Date) => {
  const wf = parsed.workflows[index]!;
  const definition = parsed.definitions[wf.name] ?? '';
  const iface = workflowInterface(wf);
  rejectNul('The workflow definition', definition, wf);
  checkLength('name', wf.name, NAME_MAX.definition);
  const values: Record<string, { value: unknown; kind?: 'json' | 'timestamp' }> = {
    name: { value: wf.name },
    definition: { value: definition },
    checksum: { value: definitionChecksum(definition) },
    spec: { value: wf, kind: 'json' },
    input: { value: renderInputString(wf.input) },
    interface: { value: pyJsonDumps(iface) },
    tags: { value: wf.tags, kind: 'json' },
    scope: { value: scope },
  };
  return { wf, iface, values, now: toSeconds(now).toISOString() };
};

/**
 * Workflow definitions: several per upload, unique per (project, namespace, name), readable by the
 * owner and (when public) everyone, changeable by the owner or an admin.
 */
@Injectable()
export class WorkflowsService {
  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly guards: WorkflowDeleteGuards,
  ) {}

  async create(ctx: RequestContext, text: string, params: UploadParams): Promise<DefinitionRow[]> {
    const parsed = parseWorkflows(text, { validate: params.validate });
    const now = this.clock.now();
    return this.tx(async (em) => {
      const out: DefinitionRow[] = [];
      for (let i = 0; i < parsed.workflows.length; i++) {
        const { wf, iface, values, now: at } = workflowValues(parsed, i, params.scope, now);
        const row = await this.guard(duplicate(wf.name, params.namespace, ctx.projectId), () =>
          insertDefinition(em, T, {
            ...values,
            namespace: { value: params.namespace },
            project_id: { value: ctx.projectId },
            created_at: { value: at, kind: 'timestamp' },
          } as ColumnValues),
        );
        if (!row) throw new ConflictError(duplicate(wf.name, params.namespace, ctx.projectId));
        out.push(toWriteResponse(row, iface));
      }
      return out;
    });
  }

  /**
   * Updates every workflow of the document by name, or (with `id`) exactly one workflow by UUID, which
   * may then also be renamed. Namespaces never change.
   */
  async update(
    ctx: RequestContext,
    text: string,
    params: UploadParams,
    id?: string,
  ): Promise<DefinitionRow[]> {
    if (id !== undefined && !isUuid(id)) {
      throw new InvalidInputError(
        `A workflow to update by identifier must be given by its UUID [identifier: ${id}]`,
      );
    }
    const parsed = parseWorkflows(text, { validate: params.validate });
    if (id !== undefined && parsed.workflows.length > 1) {
      throw new InvalidInputError(
        `More than one workflows are not supported for update with identifier. [identifier: ${id}]`,
      );
    }
    const now = this.clock.now();
    return this.tx(async (em) => {
      const out: DefinitionRow[] = [];
      for (let i = 0; i < parsed.workflows.length; i++) {
        const { wf, iface, values, now: at } = workflowValues(parsed, i, params.scope, now);
        const identifier = id ?? wf.name;
        const current = await findDefinition(em, T, {
          identifier,
          identifierIsId: id !== undefined,
          namespaces: id !== undefined ? [] : [params.namespace],
          visibility: visibilityOf(ctx),
          callerProjectId: ctx.projectId,
          forUpdate: true,
        });
        if (!current) throw workflowNotFound(identifier, params.namespace);
        checkOwner(ctx, T, current);
        const projectId = String(current.project_id);
        const namespace = String(current.namespace);
        if (
          wf.name !== current.name &&
          (await nameTaken(em, T, { projectId, namespace, name: wf.name }, String(current.id)))
        ) {
          throw new ConflictError(duplicate(wf.name, namespace, projectId));
        }
        const row = await this.guard(duplicate(wf.name, namespace, projectId), () =>
          updateDefinition(em, T, String(current.id), {
            ...values,
            updated_at: { value: at, kind: 'timestamp' },
          } as ColumnValues),
        );
        if (!row) throw workflowNotFound(identifier, params.namespace);
        out.push(toWriteResponse(row, iface));
      }
      return out;
    });
  }

  async get(
    ctx: RequestContext,
    identifier: string,
    namespace: string,
    fields: readonly string[],
  ): Promise<DefinitionRow> {
    const row = await this.guard('', () =>
      findDefinition(this.db, T, {
        identifier,
        identifierIsId: isUuid(identifier),
        namespaces: [namespace],
        visibility: visibilityOf(ctx),
        callerProjectId: ctx.projectId,
        fields,
      }),
    );
    if (!row) throw workflowNotFound(identifier, namespace);
    return row;
  }

  async delete(ctx: RequestContext, identifier: string, namespace: string): Promise<void> {
    await this.tx(async (em) => {
      const row = await findDefinition(em, T, {
        identifier,
        identifierIsId: isUuid(identifier),
        namespaces: [namespace],
        visibility: visibilityOf(ctx),
        callerProjectId: ctx.projectId,
        fields: ['id', 'name', 'namespace', 'project_id'],
        forUpdate: true,
      });
      if (!row) throw workflowNotFound(identifier, namespace);
      checkOwner(ctx, T, row);
      await this.guards.check(em, {
        id: String(row.id),
        name: String(row.name),
        namespace: String(row.namespace),
        identifier,
      });
      await deleteDefinition(em, T, String(row.id));
    });
  }

  list(req: ListRequest): Promise<JsonPage> {
    return listDefinitionPage(
      this.db,
      T,
      req,
      (marker) => new NotFoundError('Workflow', marker, `Workflow not found [workflow_id=${marker}]`),
    );
  }

  /** `POST /v2/workflows/validate`: the validator's verdict, never an error status for bad DSL. */
  validate(text: string): { valid: true } | { valid: false; error: string } {
    return validateDefinitionText(parseWorkflows, text);
  }

  private tx<R>(fn: (em: SqlRunner) => Promise<R>): Promise<R> {
    return this.guard('Duplicate entry for WorkflowDefinition', () =>
      runInTransaction(this.db, (em) => fn(em)),
    );
  }

  private guard<R>(conflict: string, fn: () => Promise<R>): Promise<R> {
    return dbGuarded(conflict, fn);
  }
}
