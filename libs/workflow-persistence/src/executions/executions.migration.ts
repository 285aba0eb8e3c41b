import type { MigrationInterface, QueryRunner } from 'typeorm';
import {
  AddExecutionStreamPositions1765300000000,
  AppendExecutionEventsFunction1765300000002,
  AppendExecutionEventsOfTrees1765600000100,
  AppendExecutionEventsOneHorizon1765700000100,
  PackExecutionEvents1765800000000,
  AnnounceLastExecutionEventSeq1765516000000,
  NarrowExecutionStreamHorizon1765516000001,
  CreateExecutionEvents1764600000000,
  SlimExecutionEvents1765300000001,
} from './execution-events';
import { AppendCreationWithoutCounter1765900000000 } from './execution-creation-entry.migration';
import { StreamHorizonFromSubtransaction1766000000000 } from './execution-stream-horizon.migration';
import { AnnounceOnlyToListeners1766100000000 } from './execution-stream-listeners.migration';
import { IndexCompletedRootExecutions1764500000000, IndexUnfinishedByRoot1765400000000 } from './expiration';
import {
  AddExecutorHeartbeats1764900000000,
  AllowApiServiceInstances1765100000000,
  IndexUnfinishedTasksByLastChange1766200000000,
  IndexRunningExecutionsByLastChange1766200000001,
} from '../reconciliation/reconciliation.migration';

/**
 * Workflow executions, task executions and action executions. JSON values are jsonb; `seq` columns
 * give a stable creation order (ids are random UUIDs). Indexes serve the engine's snapshot load (by
 * execution), the API's list pages ((created_at, id) keysets, per project) and the sub-execution
 * lookups (parent, root, task). SQL that runs the same on PostgreSQL and PGlite.
 */
export class CreateExecutions1763950000000 implements MigrationInterface {
  name = 'CreateExecutions1763950000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "workflow_executions" (
        "id" uuid NOT NULL,
        "seq" bigserial NOT NULL,
        "workflow_id" varchar(255) NOT NULL,
        "workflow_name" varchar(255) NOT NULL,
        "workflow_namespace" varchar(255) NOT NULL DEFAULT '',
        "description" text NOT NULL DEFAULT '',
        "tags" jsonb NOT NULL DEFAULT '[]',
        "project_id" varchar(255) NOT NULL,
        "state" varchar(16) NOT NULL,
        "state_info" text,
        "spec" jsonb NOT NULL,
        "input" jsonb NOT NULL DEFAULT '{}',
        "output" jsonb NOT NULL DEFAULT '{}',
        "params" jsonb NOT NULL DEFAULT '{}',
        "context" jsonb NOT NULL DEFAULT '{}',
        "var_names" jsonb NOT NULL DEFAULT '[]',
        "deferred" jsonb NOT NULL DEFAULT '[]',
        "task_execution_id" uuid,
        "parent_execution_id" uuid,
        "root_execution_id" uuid,
        "source_execution_id" uuid,
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz,
        CONSTRAINT "PK_workflow_executions" PRIMARY KEY ("id"),
        CONSTRAINT "CHK_workflow_executions_state" CHECK ("state" IN ('IDLE', 'RUNNING', 'PAUSED', 'SUCCESS', 'ERROR', 'CANCELLED'))
      )`);
    await q.query(
      `CREATE INDEX "IDX_workflow_executions_created" ON "workflow_executions" ("created_at", "id")`,
    );
    await q.query(
      `CREATE INDEX "IDX_workflow_executions_project_created" ON "workflow_executions" ("project_id", "created_at", "id")`,
    );
    await q.query(
      `CREATE INDEX "IDX_workflow_executions_parent" ON "workflow_executions" ("parent_execution_id")`,
    );
    await q.query(
      `CREATE INDEX "IDX_workflow_executions_root" ON "workflow_executions" ("root_execution_id")`,
    );
    await q.query(
      `CREATE INDEX "IDX_workflow_executions_task" ON "workflow_executions" ("task_execution_id")`,
    );

    await q.query(`
      CREATE TABLE "task_executions" (
        "id" uuid NOT NULL,
        "seq" bigserial NOT NULL,
        "name" varchar(255) NOT NULL,
        "workflow_execution_id" uuid NOT NULL,
        "workflow_id" varchar(255) NOT NULL,
        "workflow_name" varchar(255) NOT NULL,
        "workflow_namespace" varchar(255) NOT NULL DEFAULT '',
        "project_id" varchar(255) NOT NULL,
        "type" varchar(16) NOT NULL,
        "tags" jsonb NOT NULL DEFAULT '[]',
        "state" varchar(16) NOT NULL,
        "state_info" text,
        "in_context" jsonb NOT NULL DEFAULT '{}',
        "published" jsonb NOT NULL DEFAULT '{}',
        "published_global" jsonb NOT NULL DEFAULT '{}',
        "runtime_context" jsonb NOT NULL DEFAULT '{}',
        "result" jsonb,
        "processed" boolean NOT NULL DEFAULT false,
        "next_tasks" jsonb NOT NULL DEFAULT '[]',
        "error_handled" boolean NOT NULL DEFAULT false,
        "started_at" timestamptz,
        "finished_at" timestamptz,
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz,
        CONSTRAINT "PK_task_executions" PRIMARY KEY ("id"),
        CONSTRAINT "FK_task_executions_execution" FOREIGN KEY ("workflow_execution_id")
          REFERENCES "workflow_executions" ("id") ON DELETE CASCADE
      )`);
    await q.query(
      `CREATE INDEX "IDX_task_executions_execution" ON "task_executions" ("workflow_execution_id", "seq")`,
    );
    await q.query(`CREATE INDEX "IDX_task_executions_created" ON "task_executions" ("created_at", "id")`);
    await q.query(
      `CREATE INDEX "IDX_task_executions_project_created" ON "task_executions" ("project_id", "created_at", "id")`,
    );

    await q.query(`
      CREATE TABLE "action_executions" (
        "id" uuid NOT NULL,
        "seq" bigserial NOT NULL,
        "name" varchar(255) NOT NULL,
        "workflow_execution_id" uuid,
        "task_execution_id" uuid,
        "task_name" varchar(255),
        "workflow_name" varchar(255),
        "workflow_namespace" varchar(255) NOT NULL DEFAULT '',
        "project_id" varchar(255) NOT NULL,
        "description" text NOT NULL DEFAULT '',
        "tags" jsonb NOT NULL DEFAULT '[]',
        "state" varchar(16) NOT NULL,
        "state_info" text,
        "input" jsonb NOT NULL DEFAULT '{}',
        "output" jsonb,
        "params" jsonb NOT NULL DEFAULT '{}',
        "accepted" boolean NOT NULL DEFAULT true,
        "item_index" integer,
        "claimed_at" timestamptz,
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz,
        CONSTRAINT "PK_action_executions" PRIMARY KEY ("id"),
        CONSTRAINT "FK_action_executions_task" FOREIGN KEY ("task_execution_id")
          REFERENCES "task_executions" ("id") ON DELETE CASCADE
      )`);
    await q.query(
      `CREATE INDEX "IDX_action_executions_execution" ON "action_executions" ("workflow_execution_id", "seq")`,
    );
    await q.query(
      `CREATE INDEX "IDX_action_executions_task" ON "action_executions" ("task_execution_id", "seq")`,
    );
    await q.query(`CREATE INDEX "IDX_action_executions_created" ON "action_executions" ("created_at", "id")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "action_executions"`);
    await q.query(`DROP TABLE "task_executions"`);
    await q.query(`DROP TABLE "workflow_executions"`);
  }
}

/**
 * The workflow delete guard asks for unfinished executions of a workflow; without this index it
 * scanned every execution.
 */
export class IndexExecutionsByWorkflow1764100000000 implements MigrationInterface {
  name = 'IndexExecutionsByWorkflow1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX "IDX_workflow_executions_workflow_state" ON "workflow_executions" ("workflow_id", "state")`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "IDX_workflow_executions_workflow_state"`);
  }
}

/**
 * Standalone action executions (`POST /v2/action_executions`): a run whose result is only returned
 * (`save_result` false on a synchronous action) still goes through a row, which the executor completes
 * and the API reads and deletes; `transient` keeps such rows out of every read. The partial index
 * serves the sweep of transient rows an API crash left behind.
 */
export class AddStandaloneActionRuns1764337700000 implements MigrationInterface {
  name = 'AddStandaloneActionRuns1764337700000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "action_executions" ADD COLUMN "transient" boolean NOT NULL DEFAULT false`);
    await q.query(
      `CREATE INDEX "IDX_action_executions_transient" ON "action_executions" ("created_at") WHERE "transient"`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "IDX_action_executions_transient"`);
    await q.query(`ALTER TABLE "action_executions" DROP COLUMN "transient"`);
  }
}

/**
 * List pages that stay flat as the history grows (issue 17): action executions are listed per
 * project in (created_at, id) order, which only the all-projects index served (a project's page
 * walked every project's rows); executions filtered by state (RUNNING is a handful of rows among
 * millions) read the project's rows of that state in page order instead of filtering all of them.
 */
export class IndexRunListsByProject1765100000000 implements MigrationInterface {
  name = 'IndexRunListsByProject1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX "IDX_action_executions_project_created" ON "action_executions" ("project_id", "created_at", "id")`,
    );
    await q.query(
      `CREATE INDEX "IDX_workflow_executions_project_state" ON "workflow_executions" ("project_id", "state", "created_at", "id")`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "IDX_workflow_executions_project_state"`);
    await q.query(`DROP INDEX "IDX_action_executions_project_created"`);
  }
}

/**
 * `GET /v2/executions?workflow_name=X`, Mistral's commonest filter, walked the project's
 * (created_at, id) order filtering by name: fine for a busy workflow, a scan of the project for a
 * new one with few executions among millions (issue 17).
 */
export class IndexExecutionsByWorkflowName1765100000001 implements MigrationInterface {
  name = 'IndexExecutionsByWorkflowName1765100000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX "IDX_workflow_executions_project_workflow" ON "workflow_executions" ("project_id", "workflow_name", "created_at", "id")`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "IDX_workflow_executions_project_workflow"`);
  }
}

/**
 * The items of with-items tasks (issue 17): one row per item — its variables, evaluated once when
 * the task starts, and its state and result in the current attempt — so that an item starting or
 * completing writes its own small row instead of rewriting a task row that held the whole list.
 */
export class CreateTaskExecutionItems1765200000000 implements MigrationInterface {
  name = 'CreateTaskExecutionItems1765200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "task_execution_items" (
        "task_execution_id" uuid NOT NULL,
        "idx" integer NOT NULL,
        "vars" jsonb NOT NULL DEFAULT '{}',
        "state" varchar(16),
        "result" jsonb,
        CONSTRAINT "PK_task_execution_items" PRIMARY KEY ("task_execution_id", "idx"),
        CONSTRAINT "FK_task_execution_items_task" FOREIGN KEY ("task_execution_id")
          REFERENCES "task_executions" ("id") ON DELETE CASCADE
      )`);
    // tasks written before: their list, per-item states and results move to the new rows, and their
    // progress becomes counters (cursor 0: the items still waiting are those with no state)
    await q.query(`
      INSERT INTO "task_execution_items" ("task_execution_id", "idx", "vars", "state", "result")
      SELECT t."id", (e.n - 1)::integer, e.item,
             t."runtime_context" -> 'with_items_progress' -> 'states' ->> (e.n - 1)::integer,
             t."runtime_context" -> 'with_items_progress' -> 'results' -> (e.n - 1)::integer
        FROM "task_executions" t
        CROSS JOIN LATERAL jsonb_array_elements(t."runtime_context" -> 'with_items' -> 'items') WITH ORDINALITY AS e(item, n)
       WHERE jsonb_typeof(t."runtime_context" -> 'with_items' -> 'items') = 'array'`);
    await q.query(`
      UPDATE "task_executions" SET "runtime_context" =
        jsonb_set("runtime_context", '{with_items}', ("runtime_context" -> 'with_items') - 'items')
        || CASE WHEN "runtime_context" ? 'with_items_progress' THEN jsonb_build_object('with_items_progress', jsonb_build_object(
             'cursor', 0,
             'running', COALESCE(("runtime_context" -> 'with_items_progress' ->> 'running')::integer, 0),
             'done', COALESCE(("runtime_context" -> 'with_items_progress' ->> 'done')::integer, 0))) ELSE '{}'::jsonb END
       WHERE jsonb_typeof("runtime_context" -> 'with_items' -> 'items') = 'array'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "task_execution_items"`);
  }
}

/**
 * Every engine transaction loads the action rows of plain tasks and the failed ones (see
 * `NEEDED_ACTIONS` in the store); found through the execution index, that read visited every item
 * action of the execution's with-items tasks (10,000 rows per transaction at 10,000 items). This
 * index holds only the rows that query wants.
 */
export class IndexSnapshotActions1765200000001 implements MigrationInterface {
  name = 'IndexSnapshotActions1765200000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX "IDX_action_executions_snapshot" ON "action_executions" ("workflow_execution_id", "seq")
        WHERE "item_index" IS NULL OR "state" = 'ERROR'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "IDX_action_executions_snapshot"`);
  }
}

export const executionMigrations = [
  CreateExecutions1763950000000,
  IndexExecutionsByWorkflow1764100000000,
  AddStandaloneActionRuns1764337700000,
  IndexCompletedRootExecutions1764500000000,
  AddExecutorHeartbeats1764900000000,
  AllowApiServiceInstances1765100000000,
  CreateExecutionEvents1764600000000,
  IndexRunListsByProject1765100000000,
  IndexExecutionsByWorkflowName1765100000001,
  CreateTaskExecutionItems1765200000000,
  IndexSnapshotActions1765200000001,
  AddExecutionStreamPositions1765300000000,
  SlimExecutionEvents1765300000001,
  AppendExecutionEventsFunction1765300000002,
  IndexUnfinishedByRoot1765400000000,
  AnnounceLastExecutionEventSeq1765516000000,
  NarrowExecutionStreamHorizon1765516000001,
  AppendExecutionEventsOfTrees1765600000100,
  AppendExecutionEventsOneHorizon1765700000100,
  PackExecutionEvents1765800000000,
  AppendCreationWithoutCounter1765900000000,
  StreamHorizonFromSubtransaction1766000000000,
  AnnounceOnlyToListeners1766100000000,
  IndexUnfinishedTasksByLastChange1766200000000,
  IndexRunningExecutionsByLastChange1766200000001,
] as const;
