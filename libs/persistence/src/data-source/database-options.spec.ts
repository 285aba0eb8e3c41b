import { InvalidInputError } from '@osc/errors';
import { parseDatabaseUrl, resolveDatabaseOptions } from './database-options';

describe('resolveDatabaseOptions', () => {
  it('uses the embedded engine in ./data without DATABASE_URL', () => {
    expect(resolveDatabaseOptions({})).toEqual({ kind: 'pglite', dataDir: './data' });
    expect(resolveDatabaseOptions({ DATABASE_URL: '  ', DATA_DIR: '/var/lib/osc' })).toEqual({
      kind: 'pglite',
      dataDir: '/var/lib/osc',
    });
  });

  it('uses Postgres when DATABASE_URL is set, with an optional pool size', () => {
    expect(
      resolveDatabaseOptions({ DATABASE_URL: 'postgres://u:p@db:5432/osc', DATA_DIR: '/ignored' }),
    ).toEqual({
      kind: 'postgres',
      url: 'postgres://u:p@db:5432/osc',
    });
    expect(
      resolveDatabaseOptions({
        DATABASE_URL: 'postgresql://db/osc?sslmode=require',
        DATABASE_POOL_SIZE: '20',
      }),
    ).toEqual({ kind: 'postgres', url: 'postgresql://db/osc?sslmode=require', poolSize: 20 });
  });

  it.each([
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL is not a valid URL'],
    [{ DATABASE_URL: 'mysql://db/osc' }, 'DATABASE_URL must use the postgres:// or postgresql:// scheme'],
    [{ DATABASE_URL: 'postgres://db' }, 'DATABASE_URL has no database name'],
    [{ DATABASE_URL: 'postgres://db/osc', DATABASE_POOL_SIZE: '0' }, 'DATABASE_POOL_SIZE must be an integer'],
    [
      { DATABASE_URL: 'postgres://db/osc', DATABASE_POOL_SIZE: 'many' },
      'DATABASE_POOL_SIZE must be an integer',
    ],
  ])('rejects %j without echoing the value', (env, message) => {
    expect(() => resolveDatabaseOptions(env)).toThrow(InvalidInputError);
    expect(() => resolveDatabaseOptions(env)).toThrow(message);
  });

  it('never puts the password into an error message', () => {
    expect(() => parseDatabaseUrl('mysql://user:s3cret@db/osc')).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('s3cret') as unknown }),
    );
  });
});
