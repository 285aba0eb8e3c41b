import type { MigrationInterface, QueryRunner } from 'typeorm';
import {
  appendOfTreesInSubtransaction,
  creationAppendInSubtransaction,
} from './execution-stream-horizon.migration';

/**
 * History announcements (NOTIFY) only while some process listens.
 *
 * In PostgreSQL 15 a transaction that notifies takes, at commit, a lock that every notifying
 * transaction of the server shares exclusively, holds it through its commit record's flush and
 * writes its notifications to the shared queue — whether or not a backend listens. Measured here
 * (pgbench, 8 clients, a one-row insert per transaction): 14–15 k transactions/s without NOTIFY,
 * 6.4–7 k with one, and ~0.09 ms more backend CPU per transaction. Every engine transaction and every
 * creation that writes history notified, for API processes that mostly had no stream open (an API
 * process listens only while someone watches, see the API's event hub).
 *
 * A listening process now registers in `execution_stream_listeners` (its id, and an expiry it keeps
 * pushing forward while it listens); the append functions notify only when an unexpired row exists.
 * The check runs after the append's inserts, in a statement of its own (a fresh snapshot under READ
 * COMMITTED), so a transaction that did not see a registration was running, with its id assigned,
 * when the registration committed: the listener waits for every transaction in progress after its
 * registration to end, then reads again (`registerStreamListener`, `stillRunning`).
 */
export class AnnounceOnlyToListeners1766100000000 implements MigrationInterface {
  name = 'AnnounceOnlyToListeners1766100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "execution_stream_listeners" ("id" uuid PRIMARY KEY, "expires_at" timestamptz NOT NULL)`,
    );
    await q.query(creationAppendInSubtransaction(WHEN_LISTENED));
    await q.query(appendOfTreesInSubtransaction(WHEN_LISTENED));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(creationAppendInSubtransaction());
    await q.query(appendOfTreesInSubtransaction());
    await q.query(`DROP TABLE "execution_stream_listeners"`);
  }
}

/** The announcement's statements, run only while a listener's registration has not expired. */
const WHEN_LISTENED = (
  notify: string,
): string => `IF EXISTS (SELECT 1 FROM "execution_stream_listeners" WHERE "expires_at" > now()) THEN
          ${notify}
        END IF;`;
