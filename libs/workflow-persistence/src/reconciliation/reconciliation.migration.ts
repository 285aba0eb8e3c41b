import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Executor heartbeats and the reconciler's scans (issue #15).
 *
 * - `workflow_service_instances`: one row per running engine, executor, notifier or cron-scheduler
 *   instance of a process (Mistral's `GET /v2/services` lists the same thing from its coordination
 *   backend), its last heartbeat written with the database clock.
 * - `action_executions.executor_id`: the executor instance that claimed the action (cleared once an
 *   async action is handed over to its external system); `rerun_job` holds the claimed job of a
 *   `safe-rerun` task, so it can be enqueued again when its executor dies.
 * - Partial indexes: the scans only ever read unfinished rows (RUNNING actions of an executor;
 *   RUNNING, DELAYED and WAITING tasks; RUNNING executions), never the finished history.
 */
export class AddExecutorHeartbeats1764900000000 implements MigrationInterface {
  name = 'AddExecutorHeartbeats1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "workflow_service_instances" (
        "id" uuid NOT NULL,
        "kind" varchar(32) NOT NULL,
        "host" varchar(255) NOT NULL,
        "pid" integer NOT NULL,
        "started_at" timestamptz NOT NULL DEFAULT now(),
        "heartbeat_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "PK_workflow_service_instances" PRIMARY KEY ("id"),
        CONSTRAINT "CHK_workflow_service_instances_kind" CHECK ("kind" IN ('engine', 'executor', 'notifier', 'cron_scheduler'))
      )`);
    await q.query(`ALTER TABLE "action_executions" ADD COLUMN "executor_id" uuid`);
    await q.query(`ALTER TABLE "action_executions" ADD COLUMN "rerun_job" jsonb`);
    await q.query(
      `CREATE INDEX "IDX_action_executions_running_executor" ON "action_executions" ("executor_id") WHERE "state" = 'RUNNING' AND "executor_id" IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX "IDX_task_executions_unfinished" ON "task_executions" ("updated_at") WHERE "state" IN ('RUNNING', 'DELAYED', 'WAITING')`,
    );
    await q.query(
      `CREATE INDEX "IDX_workflow_executions_running" ON "workflow_executions" ("updated_at") WHERE "state" = 'RUNNING'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "IDX_workflow_executions_running"`);
    await q.query(`DROP INDEX "IDX_task_executions_unfinished"`);
    await q.query(`DROP INDEX "IDX_action_executions_running_executor"`);
    await q.query(`ALTER TABLE "action_executions" DROP COLUMN "rerun_job"`);
    await q.query(`ALTER TABLE "action_executions" DROP COLUMN "executor_id"`);
    await q.query(`DROP TABLE "workflow_service_instances"`);
  }
}

/**
 * `GET /v2/services` lists workflow-api processes too (Mistral's `api_group`): the `api` kind joins
 * the instance kinds.
 */
export class AllowApiServiceInstances1765100000000 implements MigrationInterface {
  name = 'AllowApiServiceInstances1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE "workflow_service_instances" DROP CONSTRAINT "CHK_workflow_service_instances_kind"`,
    );
    await q.query(
      `ALTER TABLE "workflow_service_instances" ADD CONSTRAINT "CHK_workflow_service_instances_kind" CHECK ("kind" IN ('api', 'engine', 'executor', 'notifier', 'cron_scheduler'))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM "workflow_service_instances" WHERE "kind" = 'api'`);
    await q.query(
      `ALTER TABLE "workflow_service_instances" DROP CONSTRAINT "CHK_workflow_service_instances_kind"`,
    );
    await q.query(
      `ALTER TABLE "workflow_service_instances" ADD CONSTRAINT "CHK_workflow_service_instances_kind" CHECK ("kind" IN ('engine', 'executor', 'notifier', 'cron_scheduler'))`,
    );
  }
}

/** A row's last change, the key the reconciler's scans compare and order by. */
const LAST_CHANGE = `(COALESCE("updated_at", "created_at"))`;

const UNFINISHED_TASKS = `"state" IN ('RUNNING', 'DELAYED', 'WAITING')`;

/** Builds the partial index `name` of `table` again (same name and predicate) with the key `key`. */
async function rekeyIndex(
  q: QueryRunner,
  name: string,
  table: string,
  where: string,
  key: string,
): Promise<void> {
  await q.query(`DROP INDEX "${name}"`);
  await q.query(`CREATE INDEX "${name}" ON "${table}" (${key}) WHERE ${where}`);
}

/**
 * The unfinished tasks' index keyed by what the stuck-task scan compares and orders by, the task's
 * last change (`COALESCE("updated_at", "created_at")`), instead of `updated_at` alone.
 *
 * Keyed by `updated_at`, the index served the scan's state condition but neither its age condition
 * nor its order, so PostgreSQL read the whole index for every RUNNING execution (a bitmap AND with
 * the execution's tasks): seq10 at ~2,300 RUNNING executions, 2.8 s and 58,000 buffers for one scan
 * that found nothing, the index holding ~16,600 entries, most of them versions already finished —
 * the scan's cost grew with the running executions times the tasks finished since the last vacuum.
 * The scan now walks this index from its oldest entry and stops at the first younger than its
 * cut-off (or at its limit), looking up each candidate's execution by primary key.
 */
export class IndexUnfinishedTasksByLastChange1766200000000 implements MigrationInterface {
  name = 'IndexUnfinishedTasksByLastChange1766200000000';

  private readonly index = ['IDX_task_executions_unfinished', 'task_executions', UNFINISHED_TASKS] as const;

  async up(q: QueryRunner): Promise<void> {
    await rekeyIndex(q, ...this.index, LAST_CHANGE);
  }

  async down(q: QueryRunner): Promise<void> {
    await rekeyIndex(q, ...this.index, '"updated_at"');
  }
}

/**
 * The RUNNING executions' index keyed by their last change (`COALESCE("updated_at", "created_at")`),
 * what the idle-execution scan compares and orders by: the scan walks it from the oldest and stops at
 * its cut-off or its limit, looking at each candidate's tasks through their execution's index. (Its
 * `NOT EXISTS` on the tasks had been an anti-join reading the whole `task_executions` table at every
 * pass: 181 ms at 500,000 task rows, growing with the history.)
 */
export class IndexRunningExecutionsByLastChange1766200000001 implements MigrationInterface {
  name = 'IndexRunningExecutionsByLastChange1766200000001';

  private readonly index = [
    'IDX_workflow_executions_running',
    'workflow_executions',
    `"state" = 'RUNNING'`,
  ] as const;

  async up(q: QueryRunner): Promise<void> {
    await rekeyIndex(q, ...this.index, LAST_CHANGE);
  }

  async down(q: QueryRunner): Promise<void> {
    await rekeyIndex(q, ...this.index, '"updated_at"');
  }
}
