import { BACKUP_TRANSITIONS } from './backup-status';
import { GROUP_SNAPSHOT_TRANSITIONS, GROUP_TRANSITIONS } from './group-status';
import {
  BACKUP_OPERATIONS,
  fromStatus,
  GROUP_OPERATIONS,
  GROUP_SETTLEMENTS,
  GROUP_SNAPSHOT_OPERATIONS,
  GROUP_SNAPSHOT_SETTLEMENTS,
  MIGRATION_OPERATIONS,
  refusalOf,
  SNAPSHOT_OPERATIONS,
  VOLUME_OPERATIONS,
  type StatusOperation,
} from './operations';
import { SNAPSHOT_STATUSES, SNAPSHOT_TRANSITIONS } from './snapshot-status';
import { canTransition, type TransitionTable } from './transition-table';
import {
  VOLUME_STATUSES,
  VOLUME_TRANSITIONS,
  isMigrating,
  isMigrationInFlight,
  NOT_MIGRATING_STATUSES,
} from './volume-status';

const V = '5f0c3d1e-0000-4000-8000-000000000001';
const DELETE =
  'Invalid volume: Volume status must be available, error, error_restoring, error_extending, error_managing and must not be migrating, attached, belong to a group or have snapshots (it is in-use).';

/**
 * Written out independently of operations.ts: [name, sources, target, refusal filled with
 * id V, status in-use and snapshot S] (null: the operation is silent when it loses the race).
 */
const ROWS: readonly [keyof typeof VOLUME_OPERATIONS, string, string, string | null][] = [
  ['delete', 'available error error_restoring error_extending error_managing', 'deleting', DELETE],
  ['forceDelete', VOLUME_STATUSES.filter((s) => s !== 'deleting').join(' '), 'deleting', DELETE],
  ['unmanage', 'available error error_restoring error_extending error_managing', 'unmanaging', DELETE],
  [
    'reserve',
    'available',
    'attaching',
    'Invalid volume: Volume status must be available to reserve, but the status is in-use.',
  ],
  [
    'reserveMultiattach',
    'available in-use',
    'attaching',
    'Invalid volume: Volume status must be available or in-use to reserve, but the status is in-use.',
  ],
  [
    'attachmentReserve',
    'available',
    'reserved',
    `Invalid volume: Volume ${V} status must be available or downloading to reserve, but the current status is in-use.`,
  ],
  [
    'attachmentReserveMultiattach',
    'available in-use',
    'reserved',
    `Invalid volume: Volume ${V} status must be available, in-use or downloading to reserve, but the current status is in-use.`,
  ],
  ['unreserveToInUse', 'attaching', 'in-use', null],
  ['unreserveToAvailable', 'attaching', 'available', null],
  [
    'beginDetaching',
    'in-use',
    'detaching',
    "Invalid volume: Unable to detach volume. Volume status must be 'in-use' and attach_status must be 'attached' to detach.",
  ],
  ['rollDetaching', 'detaching', 'in-use', null],
  ['extend', 'available', 'extending', `Invalid volume: Volume ${V} status must be available to extend.`],
  [
    'extendInUse',
    'available in-use',
    'extending',
    `Invalid volume: Volume ${V} status must be available or in-use to extend.`,
  ],
  [
    'revert',
    'available',
    'reverting',
    `Invalid volume: Can't revert volume ${V} to its latest snapshot S. Volume's status must be 'available'.`,
  ],
  ['backup', 'available', 'backing-up', 'Invalid volume: Volume to be backed up must be available.'],
  [
    'forceBackup',
    'available in-use',
    'backing-up',
    'Invalid volume: Volume to be backed up must be available or in-use.',
  ],
  [
    'restoreBackup',
    'available',
    'restoring-backup',
    'Invalid volume: Volume to be restored to must be available.',
  ],
  [
    'offerTransfer',
    'available',
    'awaiting-transfer',
    `Invalid volume: Volume ${V} status must be available to transfer.`,
  ],
  ['endTransfer', 'awaiting-transfer', 'available', null],
  ['created', 'creating', 'available', null],
  ['createFailed', 'creating', 'error', null],
  ['reschedule', 'creating', 'creating', null],
  ['deleteFailed', 'deleting', 'error_deleting', null],
  ['extendedAvailable', 'extending', 'available', null],
  ['extendedInUse', 'extending', 'in-use', null],
  ['extendFailed', 'extending', 'error_extending', null],
  ['backedUpAvailable', 'backing-up', 'available', null],
  ['backedUpInUse', 'backing-up', 'in-use', null],
  ['reverted', 'reverting', 'available', null],
  ['revertFailed', 'reverting', 'error', null],
  ['restored', 'restoring-backup', 'available', null],
  ['restoreIntoNewFailed', 'restoring-backup', 'error', null],
  ['restoreFailed', 'restoring-backup', 'error_restoring', null],
  [
    'deleteGroupMember',
    'available error error_restoring error_extending error_deleting error_managing',
    'deleting',
    null,
  ],
  ['managed', 'managing', 'available', null],
  ['manageFailed', 'managing', 'error_managing', null],
];

/** The operations allowed to leave the transition table, each for a stated reason. */
const BYPASSES = new Set(['forceDelete', 'deleteGroupMember', 'deleteWithVolumes']);

function checkRow<S extends string>(
  table: TransitionTable<S>,
  name: string,
  op: StatusOperation<S>,
  sources: string,
  target: string,
  refusal: string | null,
): void {
  expect([...op.sources]).toEqual(sources.split(' '));
  expect(op.target).toBe(target);
  expect(
    op.refusal === null ? null : refusalOf(op, { id: V, status: 'in-use', snapshot: 'S', volume: 'W' }),
  ).toBe(refusal);
  expect(op.bypassesTable === true).toBe(BYPASSES.has(name));
  if (!op.bypassesTable)
    for (const from of op.sources)
      expect([from, from === op.target || canTransition(table, from, op.target)]).toEqual([from, true]);
}

describe('VOLUME_OPERATIONS', () => {
  it('has exactly the rows below', () => {
    expect(Object.keys(VOLUME_OPERATIONS).sort()).toEqual(ROWS.map(([name]) => name).sort());
  });

  it.each(ROWS)(
    '%s: sources, target and refusal; a table edge from every source',
    (name, sources, target, refusal) => {
      checkRow(VOLUME_TRANSITIONS, name, VOLUME_OPERATIONS[name], sources, target, refusal);
    },
  );
});

const SNAPSHOT_ROWS: readonly [keyof typeof SNAPSHOT_OPERATIONS, string, string, string | null][] = [
  [
    'delete',
    'available error',
    'deleting',
    'Invalid snapshot: Snapshot status must be available or error to delete, but it is in-use.',
  ],
  [
    'forceDelete',
    SNAPSHOT_STATUSES.join(' '),
    'deleting',
    'Invalid snapshot: Snapshot status must be creating or available or deleting or error or error_deleting or backing-up or restoring or unmanaging to delete, but it is in-use.',
  ],
  ['deleteWithVolume', 'available error deleting', 'deleting', null],
  ['deleteGroupMember', 'available error error_deleting', 'deleting', null],
  [
    'unmanage',
    'available error',
    'unmanaging',
    'Invalid snapshot: Snapshot status must be available or error and must not be part of a group, but it is in-use.',
  ],
  [
    'revert',
    'available',
    'restoring',
    `Invalid snapshot: Can't revert volume W to its latest snapshot ${V}. Snapshot's status must be 'available'.`,
  ],
  ['backup', 'available', 'backing-up', 'Invalid snapshot: Snapshot to be backed up must be available.'],
  ['created', 'creating', 'available', null],
  ['createFailed', 'creating', 'error', null],
  ['deleteFailed', 'deleting', 'error_deleting', null],
  ['reverted', 'restoring', 'available', null],
  ['backedUp', 'backing-up', 'available', null],
];

describe('SNAPSHOT_OPERATIONS', () => {
  it('has exactly the rows below', () => {
    expect(Object.keys(SNAPSHOT_OPERATIONS).sort()).toEqual(SNAPSHOT_ROWS.map(([name]) => name).sort());
  });

  it.each(SNAPSHOT_ROWS)(
    '%s: sources, target and refusal; a table edge from every source',
    (name, sources, target, refusal) => {
      checkRow(SNAPSHOT_TRANSITIONS, name, SNAPSHOT_OPERATIONS[name], sources, target, refusal);
    },
  );
});

const BACKUP_ROWS: readonly [keyof typeof BACKUP_OPERATIONS, string, string, string | null][] = [
  ['delete', 'available error', 'deleting', 'Invalid backup: Backup status must be available or error.'],
  [
    'forceDelete',
    'creating available error error_deleting restoring deleting',
    'deleting',
    'Invalid backup: Backup status must be creating or available or error or error_deleting or restoring or deleting.',
  ],
  ['restore', 'available', 'restoring', 'Invalid backup: Backup status must be available.'],
  ['created', 'creating', 'available', null],
  ['createFailed', 'creating', 'error', null],
  ['restored', 'restoring', 'available', null],
  ['deleteFailed', 'deleting', 'error_deleting', null],
];

describe('BACKUP_OPERATIONS', () => {
  it('has exactly the rows below', () => {
    expect(Object.keys(BACKUP_OPERATIONS).sort()).toEqual(BACKUP_ROWS.map(([name]) => name).sort());
  });

  it.each(BACKUP_ROWS)(
    '%s: sources, target and refusal; a table edge from every source',
    (name, sources, target, refusal) => {
      checkRow(BACKUP_TRANSITIONS, name, BACKUP_OPERATIONS[name], sources, target, refusal);
    },
  );
});

const GROUP_ROWS: readonly [keyof typeof GROUP_OPERATIONS, string, string, string | null][] = [
  ['placed', 'creating', 'available', null],
  ['placementFailed', 'creating', 'error', null],
  ['beginUpdate', 'available', 'updating', `Group ${V} status must be available to change its volumes.`],
  ['endUpdate', 'updating', 'available', null],
  [
    'delete',
    'available error',
    'deleting',
    'Group status must be available or error, but current status is: in-use',
  ],
  [
    'deleteWithVolumes',
    'available error error_deleting creating updating in-use',
    'deleting',
    'Group status must be available or error, but current status is: in-use',
  ],
  ['created', 'creating', 'available', null],
  ['createFailed', 'creating', 'error', null],
  ['deleteFailed', 'deleting', 'error_deleting', null],
];

describe('GROUP_OPERATIONS', () => {
  it('has exactly the rows below', () => {
    expect(Object.keys(GROUP_OPERATIONS).sort()).toEqual(GROUP_ROWS.map(([name]) => name).sort());
  });

  it.each(GROUP_ROWS)(
    '%s: sources, target and refusal; a table edge from every source',
    (name, sources, target, refusal) => {
      checkRow(GROUP_TRANSITIONS, name, GROUP_OPERATIONS[name], sources, target, refusal);
    },
  );

  it('records each settled outcome with the operation into that status', () => {
    for (const [outcome, op] of Object.entries(GROUP_SETTLEMENTS)) expect(op.target).toBe(outcome);
    for (const [outcome, op] of Object.entries(GROUP_SNAPSHOT_SETTLEMENTS)) expect(op.target).toBe(outcome);
  });
});

const GROUP_SNAPSHOT_ROWS: readonly [
  keyof typeof GROUP_SNAPSHOT_OPERATIONS,
  string,
  string,
  string | null,
][] = [
  [
    'delete',
    'available error',
    'deleting',
    'Group snapshot status must be available or error and no group can be currently using it as source for its creation.',
  ],
  ['created', 'creating', 'available', null],
  ['createFailed', 'creating', 'error', null],
  ['deleteFailed', 'deleting', 'error_deleting', null],
];

describe('GROUP_SNAPSHOT_OPERATIONS', () => {
  it('has exactly the rows below', () => {
    expect(Object.keys(GROUP_SNAPSHOT_OPERATIONS).sort()).toEqual(
      GROUP_SNAPSHOT_ROWS.map(([name]) => name).sort(),
    );
  });

  it.each(GROUP_SNAPSHOT_ROWS)(
    '%s: sources, target and refusal; a table edge from every source',
    (name, sources, target, refusal) => {
      checkRow(GROUP_SNAPSHOT_TRANSITIONS, name, GROUP_SNAPSHOT_OPERATIONS[name], sources, target, refusal);
    },
  );
});

describe('MIGRATION_OPERATIONS', () => {
  it.each([
    ['start', [null, 'none', 'error', 'success', 'deleting'], 'starting'],
    ['copy', ['starting', 'migrating'], 'migrating'],
    ['complete', ['migrating'], 'success'],
    ['fail', ['starting', 'migrating'], 'error'],
  ] as const)('%s: migration_status %j → %s', (name, sources, target) => {
    expect(Object.keys(MIGRATION_OPERATIONS)).toContain(name);
    expect([...MIGRATION_OPERATIONS[name].migrationSources]).toEqual(sources);
    expect(MIGRATION_OPERATIONS[name].migrationTarget).toBe(target);
  });

  it('has exactly those four', () => {
    expect(Object.keys(MIGRATION_OPERATIONS).sort()).toEqual(['complete', 'copy', 'fail', 'start']);
  });
});

describe('isMigrationInFlight (a migration job owns the volume)', () => {
  it.each([
    [null, false],
    [undefined, false],
    ['none', false],
    ['error', false],
    ['success', false],
    ['completing', false],
    ['starting', true],
    ['migrating', true],
  ])('%s → %s', (status, inFlight) => {
    expect(isMigrationInFlight(status)).toBe(inFlight);
  });

  it('implies isMigrating', () => {
    for (const s of ['starting', 'migrating']) expect(isMigrating(s)).toBe(true);
  });
});

describe('refusalOf', () => {
  it('leaves an unknown placeholder as written and words a silent operation generically', () => {
    expect(refusalOf({ sources: ['a'], target: 'b', refusal: 'x {id} {other}' }, { id: '1' })).toBe(
      'x 1 {other}',
    );
    expect(refusalOf(VOLUME_OPERATIONS.rollDetaching, { status: 'available' })).toBe(
      'Invalid state: status must be detaching to become in-use, but it is available.',
    );
  });
});

describe('fromStatus', () => {
  it('narrows the sources to the status the resource was read in', () => {
    expect(fromStatus(VOLUME_OPERATIONS.forceBackup, 'in-use')).toEqual({
      sources: ['in-use'],
      target: 'backing-up',
    });
    expect(fromStatus(VOLUME_OPERATIONS.backup, 'in-use')).toEqual({ sources: [], target: 'backing-up' });
  });
});

describe('isMigrating (Cinder AVAILABLE_MIGRATION_STATUS: None, deleting, error, success)', () => {
  it.each([
    [null, false],
    ['none', false],
    ['error', false],
    ['success', false],
    ['deleting', false],
    ['starting', true],
    ['migrating', true],
    ['completing', true],
  ])('%s → %s', (status, migrating) => {
    expect(isMigrating(status)).toBe(migrating);
  });

  it('is the complement of the migration compare-and-set set', () => {
    expect([...NOT_MIGRATING_STATUSES]).toEqual([null, 'none', 'error', 'success', 'deleting']);
  });
});
