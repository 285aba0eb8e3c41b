import { InternalError } from '@osc/errors';
import { type MigrationInterface } from 'typeorm';
import { combineMigrations, type MigrationClass } from './combine-migrations';

const migration = (name: string): MigrationClass => {
  const cls = class implements MigrationInterface {
    async up(): Promise<void> {}
    async down(): Promise<void> {}
  };
  Object.defineProperty(cls, 'name', { value: name });
  return cls;
};

describe('combineMigrations', () => {
  const a1 = migration('CreateA1700000000001');
  const a2 = migration('AlterA1700000000005');
  const b1 = migration('CreateB1700000000003');

  it('merges lists from several libs in timestamp order', () => {
    expect(combineMigrations([a1, a2], [b1]).map((m) => m.name)).toEqual([
      'CreateA1700000000001',
      'CreateB1700000000003',
      'AlterA1700000000005',
    ]);
  });

  it('keeps a migration listed twice only once', () => {
    expect(combineMigrations([a1], [a1, b1])).toEqual([a1, b1]);
  });

  it('prefers a declared name over the class name', () => {
    const cls = class implements MigrationInterface {
      name = 'Declared1700000000002';
      async up(): Promise<void> {}
      async down(): Promise<void> {}
    };
    expect(combineMigrations([a1, cls, b1])).toEqual([a1, cls, b1]);
  });

  it('orders migrations sharing a timestamp by name, whatever the order of the lists', () => {
    const c1 = migration('CreateC1700000000001');
    expect(combineMigrations([c1], [a1])).toEqual([a1, c1]);
    expect(combineMigrations([a1], [c1])).toEqual([a1, c1]);
  });

  it.each([
    ['a name without a timestamp', [migration('CreateThings')], /13-digit/],
    ['two classes with one name', [a1, migration('CreateA1700000000001')], /Two different migrations/],
  ])('rejects %s', (_label, list, message) => {
    expect(() => combineMigrations(list)).toThrow(InternalError);
    expect(() => combineMigrations(list)).toThrow(message);
  });
});
