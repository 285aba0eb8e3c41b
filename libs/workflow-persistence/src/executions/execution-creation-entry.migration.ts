import type { MigrationInterface, QueryRunner } from 'typeorm';
import { APPEND_OF_TREES_PACKED, STREAM_POSITION_LOCK } from './execution-events';

/**
 * A root execution's creation entry without its tree's counter, and counters that account for it.
 *
 * Every append upserted the tree's counter row (~0.1 ms of PostgreSQL's time), the creation's too,
 * although nothing else can write a root's history before its creation commits: the engine hears of
 * the execution only through the start command, published after that commit (a sub-workflow's
 * creation is another matter: its tree's root runs, so its entry keeps the counter). Now:
 * - `osc_append_execution_creation` writes the root's creation entry as seq 1, with its stream
 *   position and horizon and its announcement, and no counter row;
 * - the group append creates a missing counter from the tree's last stored entry (one lookup by the
 *   primary key, only the first time a tree is appended to), so its first entries follow the
 *   creation's. Counters present keep counting as before (an UPDATE, then the insert only when none).
 * Two first appends of one tree at once: the second's insert waits for the first's commit on the
 * primary key, then adds to its count (ON CONFLICT … DO UPDATE), as before.
 */
export class AppendCreationWithoutCounter1765900000000 implements MigrationInterface {
  name = 'AppendCreationWithoutCounter1765900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(CREATION_APPEND);
    await q.query(appendOfTreesWithoutCreationCounter());
  }

  async down(q: QueryRunner): Promise<void> {
    // the functions before count from the counter alone: give every tree without one its counter
    await q.query(`
      INSERT INTO "execution_event_counters" ("root_execution_id", "last_seq")
        SELECT "w"."id", "l"."last"
          FROM "workflow_executions" AS "w"
          CROSS JOIN LATERAL (SELECT COALESCE("e"."last_seq", "e"."seq") AS "last" FROM "execution_events" AS "e"
                               WHERE "e"."root_execution_id" = "w"."id" ORDER BY "e"."seq" DESC LIMIT 1) AS "l"
         WHERE "w"."root_execution_id" IS NULL
        ON CONFLICT ("root_execution_id") DO NOTHING`);
    await q.query(APPEND_OF_TREES_PACKED);
    await q.query(`DROP FUNCTION "osc_append_execution_creation"`);
  }
}

/** The counter step of the group append of PackExecutionEvents1765800000000. */
const COUNTER_UPSERT = `
          INSERT INTO "execution_event_counters" ("root_execution_id", "last_seq") VALUES (p_roots[i], p_counts[i])
            ON CONFLICT ("root_execution_id") DO UPDATE SET "last_seq" = "execution_event_counters"."last_seq" + p_counts[i]
            RETURNING "last_seq" INTO v_one;`;

/** The counter step of AppendCreationWithoutCounter1765900000000 (see there). */
export const COUNTER_UPDATE_OR_CREATE = `
          UPDATE "execution_event_counters" SET "last_seq" = "last_seq" + p_counts[i] WHERE "root_execution_id" = p_roots[i]
            RETURNING "last_seq" INTO v_one;
          IF NOT FOUND THEN
            INSERT INTO "execution_event_counters" ("root_execution_id", "last_seq")
              VALUES (p_roots[i], p_counts[i] + COALESCE((SELECT COALESCE("e"."last_seq", "e"."seq") FROM "execution_events" AS "e"
                                                           WHERE "e"."root_execution_id" = p_roots[i] ORDER BY "e"."seq" DESC LIMIT 1), 0))
              ON CONFLICT ("root_execution_id") DO UPDATE SET "last_seq" = "execution_event_counters"."last_seq" + p_counts[i]
              RETURNING "last_seq" INTO v_one;
          END IF;`;

/** The creation append of AppendCreationWithoutCounter1765900000000. */
export const CREATION_APPEND = `
      CREATE OR REPLACE FUNCTION "osc_append_execution_creation"(p_root uuid, p_project varchar, p_row jsonb, p_now timestamptz, p_channel text, p_payload text)
        RETURNS void LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        v_pos bigint;
      BEGIN
        PERFORM pg_advisory_xact_lock_shared(${STREAM_POSITION_LOCK}, 0);
        v_pos := nextval('execution_stream_pos');
        INSERT INTO "execution_events" ("root_execution_id", "seq", "execution_id", "project_id", "subject", "task_execution_id",
            "action_execution_id", "name", "state", "previous_state", "state_info", "details", "created_at", "stream_pos", "stream_horizon")
          VALUES (p_root, 1, (p_row->>'x')::uuid, p_project, p_row->>'s', (p_row->>'t')::uuid, (p_row->>'a')::uuid, p_row->>'n',
                  p_row->>'st', p_row->>'ps', p_row->>'si', COALESCE(p_row->'d', '{}'::jsonb), p_now, v_pos, "osc_execution_stream_horizon"());
        PERFORM pg_notify(p_channel, left(p_payload, -1) || ',"s":1}');
      END $$`;

/** The group append of AppendCreationWithoutCounter1765900000000. */
export function appendOfTreesWithoutCreationCounter(): string {
  const append = APPEND_OF_TREES_PACKED.replace(COUNTER_UPSERT, COUNTER_UPDATE_OR_CREATE);
  if (append === APPEND_OF_TREES_PACKED) throw new Error('the group append has no counter step to replace');
  return append;
}
