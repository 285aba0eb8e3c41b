/**
 * Routine maintenance of an embedded (PGlite) database: what PostgreSQL's autovacuum does on a server.
 *
 * PGlite runs PostgreSQL as one single-user backend, and a single-user backend starts no autovacuum
 * launcher: nothing vacuums or analyzes an embedded database on its own. Every row an update or a
 * delete replaces stays as a dead version, so a table with churn (the message journal, action and
 * task rows updated as they run) grows without end, every read that meets the dead versions pays
 * for stepping over or pruning them, the planner's statistics never change after the first ANALYZE,
 * and the transaction counter would one day reach PostgreSQL's wraparound limit, where the database
 * stops accepting writes. `EmbeddedMaintenance` runs a pass every interval and, table by table
 * (one statement each, so the API's queries go between them on the one session), applies
 * autovacuum's own rules with PostgreSQL's default settings:
 *
 * - VACUUM when dead rows exceed 50 + 20 % of the table's rows (`autovacuum_vacuum_threshold`,
 *   `autovacuum_vacuum_scale_factor`), or rows inserted since the last vacuum exceed 1,000 + 20 %
 *   (`autovacuum_vacuum_insert_*`, which keeps the visibility map of append-only tables current);
 * - ANALYZE (with that VACUUM, or alone) when rows changed since the last analyze exceed 50 + 10 %
 *   (`autovacuum_analyze_*`);
 * - VACUUM of any table, system catalogs included, whose oldest unfrozen transaction is older than
 *   `autovacuum_freeze_max_age` (200 million): past `vacuum_freeze_table_age` a VACUUM scans the
 *   whole table and freezes it, which is what keeps the database clear of wraparound.
 */

/** One table's counters, as `pg_stat_all_tables` and `pg_class` give them. */
export interface TableActivity {
  /** Schema-qualified and quoted, ready for a statement. */
  readonly table: string;
  /** `pg_class.reltuples`: the table's rows at its last vacuum or analyze; -1 when never counted. */
  readonly rows: number;
  readonly deadRows: number;
  readonly insertedSinceVacuum: number;
  readonly changedSinceAnalyze: number;
  /** `age(relfrozenxid)`: transactions since the table's oldest unfrozen one. */
  readonly xidAge: number;
}

/** autovacuum's thresholds; {@link POSTGRES_AUTOVACUUM_DEFAULTS} are PostgreSQL's defaults. */
export interface AutovacuumSettings {
  readonly vacuumThreshold: number;
  readonly vacuumScaleFactor: number;
  readonly insertThreshold: number;
  readonly insertScaleFactor: number;
  readonly analyzeThreshold: number;
  readonly analyzeScaleFactor: number;
  readonly freezeMaxAge: number;
}

export const POSTGRES_AUTOVACUUM_DEFAULTS: AutovacuumSettings = Object.freeze({
  vacuumThreshold: 50,
  vacuumScaleFactor: 0.2,
  insertThreshold: 1000,
  insertScaleFactor: 0.2,
  analyzeThreshold: 50,
  analyzeScaleFactor: 0.1,
  freezeMaxAge: 200_000_000,
});

/** What a pass does to one table, and why (the first reason that applied). */
export interface MaintenanceStep {
  readonly table: string;
  readonly vacuum: boolean;
  readonly analyze: boolean;
  readonly reason: 'dead-rows' | 'inserted-rows' | 'changed-rows' | 'xid-age';
}

/** The tables a pass must vacuum or analyze, by autovacuum's rules (see the module's comment). */
export function maintenanceDue(
  tables: readonly TableActivity[],
  s: AutovacuumSettings = POSTGRES_AUTOVACUUM_DEFAULTS,
): MaintenanceStep[] {
  const steps: MaintenanceStep[] = [];
  for (const t of tables) {
    const rows = Math.max(0, t.rows);
    const analyze = t.changedSinceAnalyze > s.analyzeThreshold + s.analyzeScaleFactor * rows;
    const reason: MaintenanceStep['reason'] | null =
      t.xidAge > s.freezeMaxAge
        ? 'xid-age'
        : t.deadRows > s.vacuumThreshold + s.vacuumScaleFactor * rows
          ? 'dead-rows'
          : t.insertedSinceVacuum > s.insertThreshold + s.insertScaleFactor * rows
            ? 'inserted-rows'
            : null;
    if (reason !== null) steps.push({ table: t.table, vacuum: true, analyze, reason });
    else if (analyze) steps.push({ table: t.table, vacuum: false, analyze: true, reason: 'changed-rows' });
  }
  return steps;
}

/** The one statement of a step. */
export const maintenanceStatement = (step: MaintenanceStep): string =>
  step.vacuum ? `VACUUM${step.analyze ? ' (ANALYZE)' : ''} ${step.table}` : `ANALYZE ${step.table}`;

/**
 * Every table of the current database that autovacuum would look after: user tables and the
 * system catalogs (TOAST tables are vacuumed with their own table), with their counters.
 */
export const TABLE_ACTIVITY_SQL = `
  SELECT format('%I.%I', n.nspname, c.relname) AS "table",
         c.reltuples::float8 AS "rows",
         COALESCE(s.n_dead_tup, 0)::float8 AS "deadRows",
         COALESCE(s.n_ins_since_vacuum, 0)::float8 AS "insertedSinceVacuum",
         COALESCE(s.n_mod_since_analyze, 0)::float8 AS "changedSinceAnalyze",
         age(c.relfrozenxid)::float8 AS "xidAge"
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_stat_all_tables s ON s.relid = c.oid
   WHERE c.relkind IN ('r', 'm') AND n.nspname <> 'pg_toast' AND n.nspname NOT LIKE 'pg_temp%'
   ORDER BY c.oid`;

/** Publishes this backend's pending statistics when the statement ends (PostgreSQL 15+). */
export const FLUSH_STATS_SQL = 'SELECT pg_stat_force_next_flush()';

/** How the maintenance reaches the database: one statement at a time, outside any transaction. */
export interface MaintenanceDatabase {
  query(sql: string): Promise<unknown>;
}

/** Where a pass tells what it did (an info line) and what failed (a warn line); pino-shaped. */
export interface MaintenanceLogger {
  info(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
}

export interface EmbeddedMaintenanceOptions {
  /** Milliseconds between passes; 0 turns the maintenance off. */
  readonly intervalMs: number;
  readonly logger?: MaintenanceLogger;
}

/** The passes of {@link maintenanceDue} over an embedded database, one every interval (see the module's comment). */
export class EmbeddedMaintenance {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<MaintenanceStep[]> | undefined;
  private stopped = false;

  constructor(
    private readonly db: MaintenanceDatabase,
    private readonly options: EmbeddedMaintenanceOptions,
  ) {}

  /** Schedules the passes (none when the interval is 0); the timer never keeps the process alive. */
  start(): void {
    if (this.options.intervalMs <= 0 || this.stopped) return;
    this.schedule();
  }

  /** No pass starts after this; resolves once a pass under way has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /**
   * One pass: reads every table's counters, then vacuums and analyzes the tables due, each in a
   * statement of its own. A table whose statement fails is logged and left for the next pass.
   */
  pass(): Promise<MaintenanceStep[]> {
    this.running ??= this.runPass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      void this.pass()
        .catch((err: unknown) => this.options.logger?.warn({ err }, 'database maintenance pass failed'))
        .finally(() => {
          if (!this.stopped) this.schedule();
        });
    }, this.options.intervalMs);
    this.timer.unref();
  }

  private async runPass(): Promise<MaintenanceStep[]> {
    // A backend publishes its table counters when it goes idle, at most once a second, and a later
    // flush waits on a timer that single-user PGlite never fires: without this the counters of the
    // last second's statements would stay unseen until some later statement.
    await this.db.query(FLUSH_STATS_SQL);
    // every counter is cast to float8, which the driver reads as a number
    const steps = maintenanceDue((await this.db.query(TABLE_ACTIVITY_SQL)) as TableActivity[]);
    const done: MaintenanceStep[] = [];
    const started = Date.now();
    for (const step of steps) {
      if (this.stopped) break;
      try {
        await this.db.query(maintenanceStatement(step));
        done.push(step);
      } catch (err) {
        this.options.logger?.warn(
          { err, table: step.table, statement: maintenanceStatement(step) },
          'database maintenance of a table failed; the next pass tries again',
        );
      }
    }
    if (done.length > 0)
      this.options.logger?.info(
        {
          event: 'database.maintenance',
          ms: Date.now() - started,
          tables: done,
        },
        'embedded database maintained',
      );
    return done;
  }
}
