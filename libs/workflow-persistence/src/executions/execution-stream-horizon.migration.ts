import type { MigrationInterface, QueryRunner } from 'typeorm';
import {
  CREATION_APPEND,
  COUNTER_UPDATE_OR_CREATE,
  appendOfTreesWithoutCreationCounter,
} from './execution-creation-entry.migration';
import { STREAM_HORIZON, STREAM_POSITION_LOCK } from './execution-events';

/**
 * An execution entry's stream horizon from the id of a subtransaction instead of a scan of every
 * backend's status.
 *
 * The horizon bounds every transaction id assigned before the entry's stream position was taken
 * (see listExecutionStateChanges). It was computed with `osc_execution_stream_horizon()`, which reads
 * `pg_stat_get_activity` — a row per backend of the server, built and thrown away — for the API's
 * every creation and every engine append with an execution entry: 115 µs a call with the
 * benchmark's ~40 backends (pg_stat_statements, seq10 through the API), a quarter of what the history
 * cost PostgreSQL. Transaction ids are handed out in order, so an id assigned after the position was
 * taken is above every id assigned before it: the append now takes its positions, then inserts its
 * rows in a subtransaction (a PL/pgSQL block with an exception clause), whose id, assigned at its
 * first insert, is the rows' `xmin`. The rows keep the transaction's own (top-level, 64-bit) id in
 * `stream_xact`, from which a reader widens the 32-bit `xmin` ({@link STREAM_HORIZON}); `stream_horizon`
 * stays for the rows written before (null in new rows). The transaction's id is taken before its
 * positions (`pg_current_xact_id()` assigns it when it has none), as the settledness rule needs.
 */
export class StreamHorizonFromSubtransaction1766000000000 implements MigrationInterface {
  name = 'StreamHorizonFromSubtransaction1766000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "execution_events" ADD COLUMN "stream_xact" bigint`);
    await q.query(CREATION_APPEND_IN_SUBTRANSACTION);
    await q.query(APPEND_OF_TREES_IN_SUBTRANSACTION);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `UPDATE "execution_events" SET "stream_horizon" = ${STREAM_HORIZON} WHERE "stream_horizon" IS NULL AND "stream_xact" IS NOT NULL`,
    );
    await q.query(CREATION_APPEND);
    await q.query(appendOfTreesWithoutCreationCounter());
    await q.query(`ALTER TABLE "execution_events" DROP COLUMN "stream_xact"`);
  }
}

/**
 * The creation append of this migration; `announce` wraps its NOTIFY statement (the next migration
 * makes it conditional).
 */
export const creationAppendInSubtransaction = (announce: (notify: string) => string = (n) => n): string => `
      CREATE OR REPLACE FUNCTION "osc_append_execution_creation"(p_root uuid, p_project varchar, p_row jsonb, p_now timestamptz, p_channel text, p_payload text)
        RETURNS void LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        v_xact bigint := pg_current_xact_id()::text::bigint;
        v_pos bigint;
      BEGIN
        PERFORM pg_advisory_xact_lock_shared(${STREAM_POSITION_LOCK}, 0);
        v_pos := nextval('execution_stream_pos');
        -- a subtransaction: its id, assigned at the insert, is the row's xmin and above every id assigned before v_pos
        BEGIN
          INSERT INTO "execution_events" ("root_execution_id", "seq", "execution_id", "project_id", "subject", "task_execution_id",
              "action_execution_id", "name", "state", "previous_state", "state_info", "details", "created_at", "stream_pos", "stream_xact")
            VALUES (p_root, 1, (p_row->>'x')::uuid, p_project, p_row->>'s', (p_row->>'t')::uuid, (p_row->>'a')::uuid, p_row->>'n',
                    p_row->>'st', p_row->>'ps', p_row->>'si', COALESCE(p_row->'d', '{}'::jsonb), p_now, v_pos, v_xact);
        EXCEPTION WHEN unique_violation THEN RAISE;
        END;
        ${announce(`PERFORM pg_notify(p_channel, left(p_payload, -1) || ',"s":1}');`)}
      END $$`;

const CREATION_APPEND_IN_SUBTRANSACTION = creationAppendInSubtransaction();

/** The trees' append of this migration; `announce` wraps its loop of NOTIFY statements. */
export const appendOfTreesInSubtransaction = (announce: (notify: string) => string = (n) => n): string => `
      CREATE OR REPLACE FUNCTION "osc_append_execution_events_of_trees"(p_roots uuid[], p_counts int[], p_projects varchar[], p_rows jsonb, p_now timestamptz, p_channel text, p_payloads text[])
        RETURNS void LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        v_last bigint[] := '{}';
        v_one bigint;
        v_xact bigint;
        v_pos bigint[];
        v_n int;
      BEGIN
        FOR i IN 1 .. coalesce(array_length(p_roots, 1), 0) LOOP${COUNTER_UPDATE_OR_CREATE}
          v_last := v_last || v_one;
        END LOOP;
        v_n := jsonb_array_length(jsonb_path_query_array(p_rows, '$[*][*] ? (@.s == "execution")'));
        IF v_n > 0 THEN
          -- the transaction's id before its positions, then every position, in the entries' order
          v_xact := pg_current_xact_id()::text::bigint;
          PERFORM pg_advisory_xact_lock_shared(${STREAM_POSITION_LOCK}, 0);
          SELECT array_agg(nextval('execution_stream_pos') ORDER BY "g") INTO v_pos FROM generate_series(1, v_n) AS "g";
        END IF;
        -- a subtransaction: its id, assigned at the insert, is the rows' xmin and above every id assigned before v_pos
        BEGIN
          WITH "u" AS MATERIALIZED (
            SELECT "t"."i", "x"."ord", "x"."v",
                   CASE WHEN "x"."v" ? 'p' THEN jsonb_array_length("x"."v"->'p') ELSE 1 END AS "n",
                   CASE WHEN "x"."v"->>'s' = 'execution' THEN 1 ELSE 0 END AS "is_x"
              FROM generate_subscripts(p_roots, 1) AS "t"("i")
              CROSS JOIN LATERAL jsonb_array_elements(p_rows->("t"."i" - 1)) WITH ORDINALITY AS "x"("v", "ord")
          ),
          "e" AS (
            SELECT "u".*, sum("u"."n") OVER (PARTITION BY "u"."i" ORDER BY "u"."ord") AS "upto",
                   CASE WHEN "u"."is_x" = 1 THEN sum("u"."is_x") OVER (ORDER BY "u"."i", "u"."ord") END AS "k"
              FROM "u"
          )
          INSERT INTO "execution_events" ("root_execution_id", "seq", "execution_id", "project_id", "subject", "task_execution_id",
              "action_execution_id", "name", "state", "previous_state", "state_info", "details", "created_at", "stream_pos", "stream_xact",
              "last_seq", "entries")
            SELECT p_roots["e"."i"], v_last["e"."i"] - p_counts["e"."i"] + "e"."upto" - "e"."n" + 1, ("e"."v"->>'x')::uuid, p_projects["e"."i"],
                   COALESCE("e"."v"->>'s', 'packed'), ("e"."v"->>'t')::uuid, ("e"."v"->>'a')::uuid, COALESCE("e"."v"->>'n', ''),
                   COALESCE("e"."v"->>'st', ''), "e"."v"->>'ps', "e"."v"->>'si', COALESCE("e"."v"->'d', '{}'::jsonb), p_now,
                   v_pos["e"."k"], CASE WHEN "e"."k" IS NOT NULL THEN v_xact END,
                   CASE WHEN "e"."v" ? 'p' THEN v_last["e"."i"] - p_counts["e"."i"] + "e"."upto" END, "e"."v"->'p'
              FROM "e";
        EXCEPTION WHEN unique_violation THEN RAISE;
        END;
        ${announce(`FOR i IN 1 .. coalesce(array_length(p_roots, 1), 0) LOOP
          PERFORM pg_notify(p_channel, left(p_payloads[i], -1) || ',"s":' || v_last[i] || '}');
        END LOOP;`)}
      END $$`;

const APPEND_OF_TREES_IN_SUBTRANSACTION = appendOfTreesInSubtransaction();
