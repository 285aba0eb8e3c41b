import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { ConflictError, InvalidInputError, NotFoundError } from '@osc/errors';
import type { RequestContext } from '@osc/http-common';
import { CLOCK, type Clock, DATA_SOURCE } from '@osc/platform';
import { runInTransaction } from '@osc/persistence';
import { type ActionSpec, actionInputString, parseActions } from '@osc/workflow-domain';
import {
  type ColumnValues,
  type DefinitionRow,
  type SqlRunner,
  ACTION_DEFINITIONS,
  deleteDefinition,
  findDefinition,
  insertDefinition,
  type JsonPage,
  syncSystemActions,
  toSeconds,
  updateDefinition,
} from '@osc/workflow-persistence';
import { checkOwner, visibilityOf } from '../definitions/access';
import { NAME_MAX, checkLength, rejectNul } from '../definitions/db-errors';
import { type ListRequest, isUuid } from '../definitions/list-params';
import type { UploadParams } from '../definitions/upload-params';
import { dbGuarded, listDefinitionPage, validateDefinitionText } from '../definitions/definition-pages';
import { isStandardActionName, systemActionRows } from './system-actions';

const T = ACTION_DEFINITIONS;

const duplicate = (name: string, namespace: string, projectId: string) =>
  `Duplicate entry for Action ['name', 'namespace', 'project_id']: ${name}, ${namespace}, ${projectId}`;

const definitionNotFound = (identifier: string, namespace: string) =>
  new NotFoundError(
    'Action',
    identifier,
    `Action definition not found [action_name=${identifier}, namespace=${namespace}]`,
  );

/**
 * Ad-hoc action definitions plus the listed standard actions. `name` and `description` come from the
 * definition: an update by identifier cannot rename. System actions can be read but never changed.
 */
@Injectable()
export class ActionsService implements OnModuleInit {
  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Keeps the stored system actions equal to the standard action list of this build. */
  async onModuleInit(): Promise<void> {
    await runInTransaction(this.db, (em) => syncSystemActions(em, systemActionRows(), this.clock.now()));
  }

  async create(ctx: RequestContext, text: string, params: UploadParams): Promise<DefinitionRow[]> {
    const actions = this.parse(text);
    const at = toSeconds(this.clock.now()).toISOString();
    return this.tx('Duplicate entry for Action', async (em) => {
      const out: DefinitionRow[] = [];
      for (const action of actions) {
        if (isStandardActionName(action.name))
          throw new InvalidInputError(`Attempt to modify a system action: ${action.name}`);
        const row = await insertDefinition(em, T, {
          ...this.values(text, action, params),
          name: { value: action.name },
          namespace: { value: params.namespace },
          project_id: { value: ctx.projectId },
          created_at: { value: at, kind: 'timestamp' },
        });
        if (!row) throw new ConflictError(duplicate(action.name, params.namespace, ctx.projectId));
        out.push(row);
      }
      return out;
    });
  }

  async update(
    ctx: RequestContext,
    text: string,
    params: UploadParams,
    identifier?: string,
  ): Promise<DefinitionRow[]> {
    const actions = this.parse(text);
    if (identifier !== undefined && actions.length > 1) {
      throw new InvalidInputError(
        `More than one actions are not supported for update with identifier. [identifier: ${identifier}]`,
      );
    }
    const at = toSeconds(this.clock.now()).toISOString();
    return this.tx('Duplicate entry for Action', async (em) => {
      const out: DefinitionRow[] = [];
      for (const action of actions) {
        if (isStandardActionName(action.name))
          throw new InvalidInputError(`Attempt to modify a system action: ${action.name}`);
        const key = identifier ?? action.name;
        const current = await this.find(em, ctx, key, params.namespace, true);
        if (!current) throw definitionNotFound(key, params.namespace);
        if (current.is_system === true)
          throw new InvalidInputError(`Attempt to modify a system action: ${String(current.name)}`);
        checkOwner(ctx, T, current);
        if (current.name !== action.name) {
          throw new InvalidInputError(
            `The name of an action cannot be changed [action_name=${String(current.name)}, name in the definition=${action.name}]`,
          );
        }
        const row = await updateDefinition(em, T, String(current.id), {
          ...this.values(text, action, params),
          updated_at: { value: at, kind: 'timestamp' },
        });
        if (!row) throw definitionNotFound(key, params.namespace);
        out.push(row);
      }
      return out;
    });
  }

  /** By name or UUID in `namespace`, falling back to the default namespace (where system actions live). */
  async get(ctx: RequestContext, identifier: string, namespace: string): Promise<DefinitionRow> {
    const row = await this.guard(() => this.find(this.db, ctx, identifier, namespace, false));
    if (!row)
      throw new NotFoundError(
        'Action',
        identifier,
        `Action not found [name=${identifier}, namespace=${namespace}]`,
      );
    return row;
  }

  async delete(ctx: RequestContext, identifier: string, namespace: string): Promise<void> {
    await this.tx('', async (em) => {
      const row = await this.find(em, ctx, identifier, namespace, true);
      if (!row) throw definitionNotFound(identifier, namespace);
      if (row.is_system === true)
        throw new InvalidInputError(`Attempt to delete a system action: ${identifier}`);
      checkOwner(ctx, T, row);
      await deleteDefinition(em, T, String(row.id));
    });
  }

  list(req: ListRequest): Promise<JsonPage> {
    return listDefinitionPage(
      this.db,
      T,
      req,
      (marker) => new NotFoundError('Action', marker, `Action not found [id=${marker}]`),
    );
  }

  validate(text: string): { valid: true } | { valid: false; error: string } {
    return validateDefinitionText(parseActions, text);
  }

  private parse(text: string): ActionSpec[] {
    const actions = parseActions(text);
    rejectNul('The action definition', text, actions);
    for (const a of actions) checkLength('name', a.name, NAME_MAX.definition);
    return actions;
  }

  private find(
    db: SqlRunner,
    ctx: RequestContext,
    identifier: string,
    namespace: string,
    forUpdate: boolean,
  ) {
    return findDefinition(db, T, {
      identifier,
      identifierIsId: isUuid(identifier),
      namespaces: namespace === '' ? [''] : [namespace, ''],
      visibility: visibilityOf(ctx),
      callerProjectId: ctx.projectId,
      forUpdate,
    });
  }

  /** Mistral stores the whole submitted text as each action's definition. */
  private values(text: string, action: ActionSpec, params: UploadParams): ColumnValues {
    return {
      definition: { value: text },
      description: { value: action.description ?? null },
      input: { value: actionInputString(action) },
      spec: { value: action, kind: 'json' },
      tags: { value: action.tags, kind: 'json' },
      scope: { value: params.scope },
    };
  }

  private tx<R>(conflict: string, fn: (em: SqlRunner) => Promise<R>): Promise<R> {
    return this.guard(() => runInTransaction(this.db, (em) => fn(em)), conflict);
  }

  private guard<R>(fn: () => Promise<R>, conflict = 'Duplicate entry for Action'): Promise<R> {
    return dbGuarded(conflict, fn);
  }
}
