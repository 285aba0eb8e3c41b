import {
  POSTGRES_AUTOVACUUM_DEFAULTS,
  type TableActivity,
  maintenanceDue,
  maintenanceStatement,
} from './embedded-maintenance';

const table = (t: Partial<TableActivity>): TableActivity => ({
  table: 'public.t',
  rows: 10_000,
  deadRows: 0,
  insertedSinceVacuum: 0,
  changedSinceAnalyze: 0,
  xidAge: 1_000,
  ...t,
});

describe('maintenanceDue (autovacuum rules with PostgreSQL defaults)', () => {
  it('leaves a table below every threshold alone', () => {
    expect(
      maintenanceDue([table({ deadRows: 2050, insertedSinceVacuum: 3000, changedSinceAnalyze: 1050 })]),
    ).toEqual([]);
  });

  it('vacuums a table whose dead rows pass 50 + 20 % of its rows, and analyzes it when its changes pass 50 + 10 %', () => {
    expect(maintenanceDue([table({ deadRows: 2051 })])).toEqual([
      { table: 'public.t', vacuum: true, analyze: false, reason: 'dead-rows' },
    ]);
    expect(maintenanceDue([table({ deadRows: 2051, changedSinceAnalyze: 1051 })])).toEqual([
      { table: 'public.t', vacuum: true, analyze: true, reason: 'dead-rows' },
    ]);
  });

  it('vacuums an append-only table once its inserts pass 1,000 + 20 % of its rows', () => {
    expect(maintenanceDue([table({ insertedSinceVacuum: 3001 })])).toEqual([
      { table: 'public.t', vacuum: true, analyze: false, reason: 'inserted-rows' },
    ]);
  });

  it('analyzes alone a table that changed without dead rows enough to vacuum', () => {
    expect(maintenanceDue([table({ changedSinceAnalyze: 1051 })])).toEqual([
      { table: 'public.t', vacuum: false, analyze: true, reason: 'changed-rows' },
    ]);
  });

  it('counts a table never vacuumed nor analyzed (reltuples -1) as empty', () => {
    expect(maintenanceDue([table({ rows: -1, deadRows: 51, changedSinceAnalyze: 51 })])).toEqual([
      { table: 'public.t', vacuum: true, analyze: true, reason: 'dead-rows' },
    ]);
  });

  it('vacuums any table, however idle, once its oldest unfrozen transaction is older than autovacuum_freeze_max_age', () => {
    const old = POSTGRES_AUTOVACUUM_DEFAULTS.freezeMaxAge + 1;
    expect(
      maintenanceDue([table({ table: 'pg_catalog.pg_class', xidAge: old }), table({ xidAge: old - 2 })]),
    ).toEqual([{ table: 'pg_catalog.pg_class', vacuum: true, analyze: false, reason: 'xid-age' }]);
  });

  it('writes one statement per step', () => {
    expect(
      maintenanceStatement({ table: 'public."a b"', vacuum: true, analyze: true, reason: 'dead-rows' }),
    ).toBe('VACUUM (ANALYZE) public."a b"');
    expect(maintenanceStatement({ table: 'public.t', vacuum: true, analyze: false, reason: 'xid-age' })).toBe(
      'VACUUM public.t',
    );
    expect(
      maintenanceStatement({ table: 'public.t', vacuum: false, analyze: true, reason: 'changed-rows' }),
    ).toBe('ANALYZE public.t');
  });
});
