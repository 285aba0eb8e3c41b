import { InvalidInputError } from '@osc/errors';
import {
  advanceBackupPolicy,
  chooseBackupKind,
  chooseRetention,
  nextBackupRun,
  parseBackupSchedule,
  parseCreateBackupPolicy,
  parseUpdateBackupPolicy,
  planRebase,
  prefixBeforeRebase,
  rebasedPrefix,
  unchangedSinceParent,
  type ChainLayer,
  type PolicyBackup,
} from './backup-policy';

const VOL = '0b0f6c3e-8d1a-4c47-9d1e-5b2a9f6e7c10';
const TYPE = '5e2b1a0c-1d2e-4f30-8a4b-6c7d8e9f0a1b';
const t = (min: number): Date => new Date(Date.UTC(2026, 10, 26, 12, min));

describe('backup policy schedule', () => {
  it('runs five-field patterns and nicknames in UTC, strictly after the given time', () => {
    const every = parseBackupSchedule('* * * * *');
    expect(nextBackupRun(every, new Date('2026-11-26T12:00:00Z'))).toEqual(new Date('2026-11-26T12:01:00Z'));
    expect(nextBackupRun(every, new Date('2026-11-26T12:00:59.900Z'))).toEqual(
      new Date('2026-11-26T12:01:00Z'),
    );
    expect(nextBackupRun(parseBackupSchedule('30 2 * * 1'), new Date('2026-11-26T00:00:00Z'))).toEqual(
      new Date('2026-11-30T02:30:00Z'),
    );
    expect(nextBackupRun(parseBackupSchedule(' @Daily '), new Date('2026-11-26T00:00:00Z'))).toEqual(
      new Date('2026-11-27T00:00:00Z'),
    );
  });

  it('advances one run past a late firing, never making up missed runs', () => {
    const every = parseBackupSchedule('*/5 * * * *');
    expect(advanceBackupPolicy(every, t(5), t(5))).toEqual(t(10));
    expect(advanceBackupPolicy(every, t(5), t(23))).toEqual(t(25));
  });

  it.each([
    ['* * * *'],
    ['* * * * * *'],
    ['61 * * * *'],
    ['H * * * *'],
    ['* * 31 2 *'],
    ['@reboot'],
    [''],
    [5],
    [null],
  ])('refuses %p', (s) => {
    expect(() => parseBackupSchedule(s)).toThrow(InvalidInputError);
    expect(() => parseBackupSchedule(s)).toThrow(/^Invalid input for field\/attribute schedule\. Value: /);
  });
});

describe('backup policy request bodies', () => {
  it('takes a per-volume policy with defaults', () => {
    expect(
      parseCreateBackupPolicy({ backup_policy: { volume_id: VOL, schedule: '* * * * *', retention: 3 } }),
    ).toEqual({
      name: null,
      description: null,
      volumeId: VOL,
      volumeTypeId: null,
      schedule: { schedule: '* * * * *', expression: '0 * * * * *' },
      retention: 3,
      fullEvery: 0,
      skipUnchanged: true,
      enabled: true,
    });
  });

  it('takes a per-type policy with every field', () => {
    const p = parseCreateBackupPolicy({
      backup_policy: {
        name: ' nightly ',
        description: 'd',
        volume_type_id: TYPE,
        schedule: '@daily',
        retention: '7',
        full_every: 6,
        skip_unchanged: 'false',
        enabled: false,
      },
    });
    expect(p).toMatchObject({
      name: 'nightly',
      volumeId: null,
      volumeTypeId: TYPE,
      retention: 7,
      fullEvery: 6,
      skipUnchanged: false,
      enabled: false,
    });
  });

  it.each([
    [undefined, "Missing required element 'backup_policy' in request body."],
    [
      { backup_policy: { schedule: '* * * * *', retention: 3 } },
      'Invalid input received: A backup policy applies to exactly one of volume_id or volume_type_id.',
    ],
    [
      { backup_policy: { volume_id: VOL, volume_type_id: TYPE, schedule: '* * * * *', retention: 3 } },
      'Invalid input received: A backup policy applies to exactly one of volume_id or volume_type_id.',
    ],
    [
      { backup_policy: { volume_id: 'nope', schedule: '* * * * *', retention: 3 } },
      "Invalid input for field/attribute volume_id. Value: nope. 'nope' is not a 'uuid'",
    ],
    [{ backup_policy: { volume_id: VOL, retention: 3 } }, /'schedule' is a required property/],
    [{ backup_policy: { volume_id: VOL, schedule: '* * * * *' } }, /'retention' is a required property/],
    [
      { backup_policy: { volume_id: VOL, schedule: '* * * * *', retention: 0 } },
      'Invalid input for field/attribute retention. Value: 0. 0 is less than the minimum of 1',
    ],
    [
      { backup_policy: { volume_id: VOL, schedule: '* * * * *', retention: 1001 } },
      /1001 is greater than the maximum of 1000/,
    ],
    [
      { backup_policy: { volume_id: VOL, schedule: '* * * * *', retention: 3, full_every: -1 } },
      /full_every.*less than the minimum of 0/,
    ],
    [
      { backup_policy: { volume_id: VOL, schedule: '* * * * *', retention: 3, skip_unchanged: 'maybe' } },
      /skip_unchanged.*is not a valid boolean value/,
    ],
    [
      { backup_policy: { volume_id: VOL, schedule: '* * * * *', retention: 3, every: 1 } },
      /Additional properties are not allowed \('every' was unexpected\)/,
    ],
  ])('refuses %p with a 400', (body, message) => {
    expect(() => parseCreateBackupPolicy(body)).toThrow(InvalidInputError);
    expect(() => parseCreateBackupPolicy(body)).toThrow(message);
  });

  it('updates what is given, never the target, and needs something to update', () => {
    expect(parseUpdateBackupPolicy({ backup_policy: { retention: 5, enabled: 'no' } })).toEqual({
      retention: 5,
      enabled: false,
    });
    expect(() => parseUpdateBackupPolicy({ backup_policy: { volume_id: VOL } })).toThrow(
      /'volume_id' was unexpected/,
    );
    expect(() => parseUpdateBackupPolicy({ backup_policy: {} })).toThrow(
      /^Invalid input received: At least one of/,
    );
  });
});

/** A chain helper: `full('a', 0)`, `inc('b', 'a', 1)`. */
const full = (id: string, min: number, extra: Partial<PolicyBackup> = {}): PolicyBackup => ({
  id,
  parentId: null,
  createdAt: t(min),
  byPolicy: true,
  status: 'available',
  ...extra,
});
const inc = (id: string, parentId: string, min: number, extra: Partial<PolicyBackup> = {}): PolicyBackup => ({
  ...full(id, min, extra),
  parentId,
});

describe('full or incremental', () => {
  it('starts with a full, then incrementals on the newest until full_every of them follow the full', () => {
    expect(chooseBackupKind([], 2)).toEqual({ kind: 'full' });
    expect(chooseBackupKind([full('a', 0)], 2)).toEqual({ kind: 'incremental', parentId: 'a' });
    expect(chooseBackupKind([full('a', 0), inc('b', 'a', 1)], 2)).toEqual({
      kind: 'incremental',
      parentId: 'b',
    });
    expect(chooseBackupKind([full('a', 0), inc('b', 'a', 1), inc('c', 'b', 2)], 2)).toEqual({ kind: 'full' });
    expect(chooseBackupKind([full('a', 0), inc('b', 'a', 1), inc('c', 'b', 2), full('d', 3)], 2)).toEqual({
      kind: 'incremental',
      parentId: 'd',
    });
  });

  it('makes every backup full with full_every 0, and a full when the newest chain is broken or not available', () => {
    expect(chooseBackupKind([full('a', 0)], 0)).toEqual({ kind: 'full' });
    expect(chooseBackupKind([inc('b', 'gone', 1)], 5)).toEqual({ kind: 'full' });
    expect(chooseBackupKind([full('a', 0), inc('b', 'a', 1, { status: 'error' })], 5)).toEqual({
      kind: 'incremental',
      parentId: 'a',
    });
  });

  it('skips a run only when no range changed and the size is the same', () => {
    expect(unchangedSinceParent([], 1024, 1024)).toBe(true);
    expect(unchangedSinceParent([{ offset: 0, length: 1 }], 1024, 1024)).toBe(false);
    expect(unchangedSinceParent([], 2048, 1024)).toBe(false);
  });
});

describe('retention', () => {
  it('keeps the newest N and rebases the oldest kept incremental onto its chain', () => {
    const chain = [full('a', 0), inc('b', 'a', 1), inc('c', 'b', 2), inc('d', 'c', 3), inc('e', 'd', 4)];
    expect(chooseRetention(chain, 3)).toEqual({
      rebase: [{ id: 'c', chain: ['a', 'b', 'c'] }],
      delete: ['b', 'a'],
    });
    expect(chooseRetention(chain, 5)).toEqual({ rebase: [], delete: [] });
  });

  it('needs no rebase when the oldest kept backup is a full', () => {
    const chain = [full('a', 0), inc('b', 'a', 1), full('c', 2), inc('d', 'c', 3)];
    expect(chooseRetention(chain, 2)).toEqual({ rebase: [], delete: ['b', 'a'] });
  });

  it('never deletes backups the policy did not make or that are not available, and rebases what builds on deleted ones', () => {
    const chain = [
      full('a', 0),
      inc('m', 'a', 1, { byPolicy: false }),
      inc('b', 'm', 2),
      inc('c', 'b', 3),
      inc('r', 'c', 4, { status: 'creating' }),
      inc('d', 'c', 5),
    ];
    // Policy backups available: a, b, c, d → retention 2 deletes a and b; m (manual) stays and builds on a; c builds on b.
    expect(chooseRetention(chain, 2)).toEqual({
      rebase: [
        { id: 'm', chain: ['a', 'm'] },
        { id: 'c', chain: ['a', 'm', 'b', 'c'] },
      ],
      delete: ['b', 'a'],
    });
  });
});

describe('rebase plan', () => {
  const obj = (name: string, offset: number, length: number) => ({
    name,
    offset,
    length,
    compression: 'none' as const,
    md5: '',
  });

  it('takes each byte from the newest layer that has it and cuts new objects at the chunk size', () => {
    const chain: ChainLayer[] = [
      { backupId: 'a', objects: [obj('a-0', 0, 100), obj('a-1', 200, 100)] },
      { backupId: 'b', objects: [obj('b-0', 50, 20)] },
      { backupId: 'c', objects: [obj('c-0', 60, 160), obj('c-1', 400, 10)] },
    ];
    const plan = planRebase(chain, 64);
    expect(plan.segments).toEqual([
      { offset: 0, length: 50, backupId: 'a', object: 'a-0', objectOffset: 0 },
      { offset: 50, length: 10, backupId: 'b', object: 'b-0', objectOffset: 0 },
      { offset: 60, length: 160, backupId: 'c', object: 'c-0', objectOffset: 0 },
      { offset: 220, length: 80, backupId: 'a', object: 'a-1', objectOffset: 20 },
      { offset: 400, length: 10, backupId: 'c', object: 'c-1', objectOffset: 0 },
    ]);
    expect(plan.objects).toEqual([
      { offset: 0, length: 64 },
      { offset: 64, length: 64 },
      { offset: 128, length: 64 },
      { offset: 192, length: 64 },
      { offset: 256, length: 44 },
      { offset: 400, length: 10 },
    ]);
  });

  it('restores the same bytes as applying the chain in order', () => {
    // Random layers over a 1000-byte volume: the plan rebuilt from the layers' data equals the overlay.
    let seed = 7;
    const rnd = (n: number): number => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
    for (let round = 0; round < 50; round++) {
      const size = 1000;
      const overlay = new Array<string>(size).fill('0');
      const data = new Map<string, string[]>();
      const chain: ChainLayer[] = [];
      for (let l = 0; l < 1 + rnd(5); l++) {
        const objects: ReturnType<typeof obj>[] = [];
        let at = rnd(50);
        while (at < size) {
          const length = Math.min(size - at, 1 + rnd(120));
          const name = `l${l}-${objects.length}`;
          const bytes = Array.from({ length }, () => String.fromCharCode(97 + rnd(26)));
          data.set(name, bytes);
          bytes.forEach((c, i) => (overlay[at + i] = c));
          objects.push(obj(name, at, length));
          at += length + rnd(80);
        }
        chain.push({ backupId: `l${l}`, objects });
      }
      const plan = planRebase(chain, 1 + rnd(200));
      const rebuilt = new Array<string>(size).fill('0');
      for (const s of plan.segments)
        for (let i = 0; i < s.length; i++)
          rebuilt[s.offset + i] = (data.get(s.object) as string[])[s.objectOffset + i] as string;
      expect(rebuilt.join('')).toBe(overlay.join(''));
      // The new objects cover exactly the segments.
      const covered = (ranges: readonly { offset: number; length: number }[]): number[] =>
        ranges.flatMap((r) => Array.from({ length: r.length }, (_, i) => r.offset + i));
      expect(covered(plan.objects)).toEqual(covered(plan.segments));
    }
  });
});

describe('rebased prefixes', () => {
  const prefix =
    'volume_0b1c2d3e-aaaa-4bbb-8ccc-123456789abc_20261126T150000_backup_9f8e7d6c-aaaa-4bbb-8ccc-123456789abc';
  const parent = '5a6b7c8d-1111-4222-8333-444455556666';

  it('is deterministic and leads back to the prefix it replaced', () => {
    expect(rebasedPrefix(prefix, parent)).toBe(`${prefix}_rebase_5a6b7c8d`);
    expect(prefixBeforeRebase(rebasedPrefix(prefix, parent))).toBe(prefix);
    expect(prefixBeforeRebase(prefix)).toBeNull();
  });

  it('names no object of the old prefix (a delete of the old data objects, hash file or manifest keeps the new ones)', () => {
    const next = rebasedPrefix(prefix, parent);
    for (const old of [`${prefix}-`, `${prefix}_metadata`, `${prefix}_sha256file`]) {
      for (const name of [`${next}-00001`, `${next}_metadata`, `${next}_sha256file`])
        expect(name.startsWith(old)).toBe(false);
    }
  });
});
