import { InvalidStateError } from '@osc/errors';
import { BACKUP_TRANSITIONS, TRANSFER_TRANSITIONS } from './backup-status';
import { GROUP_SNAPSHOT_TRANSITIONS, GROUP_TRANSITIONS } from './group-status';
import { VOLUME_OPERATIONS } from './operations';
import {
  SNAPSHOT_TRANSITIONS,
  parseSnapshotStatusUpdate,
  snapshotStatusUpdateSources,
} from './snapshot-status';
import { assertTransition, canTransition, sourcesOf, type TransitionTable } from './transition-table';
import {
  VOLUME_DELETABLE_STATUSES,
  VOLUME_RESETTABLE_STATUSES,
  VOLUME_TRANSITIONS,
  VOLUME_RETYPE_SOURCES,
  displayVolumeStatus,
  isMigrating,
} from './volume-status';

/** Checks every (from, to) pair of a table against an independently written list of allowed edges. */
function checkPairs<S extends string>(table: TransitionTable<S>, allowed: string): void {
  const edges = new Set(allowed.split(/\s+/).filter(Boolean));
  for (const edge of edges) {
    const [from, to] = edge.split('>') as [S, S];
    expect(table.statuses).toContain(from);
    expect(table.statuses).toContain(to);
  }
  for (const from of table.statuses) {
    for (const to of table.statuses) {
      expect([`${from}>${to}`, canTransition(table, from, to)]).toEqual([
        `${from}>${to}`,
        edges.has(`${from}>${to}`),
      ]);
    }
  }
}

describe('volume transitions', () => {
  it('allows exactly the documented pairs', () => {
    checkPairs(
      VOLUME_TRANSITIONS,
      `creating>available creating>error creating>downloading downloading>available downloading>error
       available>deleting available>extending available>retyping available>backing-up available>restoring-backup
       available>awaiting-transfer available>uploading available>reserved available>attaching available>maintenance
       available>reverting available>in-use reserved>attaching reserved>available reserved>in-use attaching>in-use attaching>available
       attaching>reserved in-use>detaching in-use>extending in-use>retyping in-use>backing-up in-use>uploading in-use>reserved in-use>attaching
       in-use>available
       detaching>available detaching>in-use maintenance>available maintenance>error deleting>error_deleting error>deleting
       awaiting-transfer>available backing-up>available backing-up>in-use restoring-backup>available
       restoring-backup>error_restoring restoring-backup>error error_restoring>deleting extending>available
       extending>in-use extending>error_extending error_extending>deleting uploading>available uploading>in-use
       retyping>available retyping>in-use retyping>error reverting>available reverting>error managing>available
       managing>error_managing error_managing>deleting error_managing>error_managing_deleting
       available>unmanaging error>unmanaging error_restoring>unmanaging error_extending>unmanaging error_managing>unmanaging`,
    );
  });
  it.each([
    ['deleting', ['available', 'error', 'error_restoring', 'error_extending', 'error_managing']],
    [
      'available',
      [
        'creating',
        'reserved',
        'attaching',
        'in-use',
        'detaching',
        'maintenance',
        'awaiting-transfer',
        'backing-up',
        'restoring-backup',
        'extending',
        'downloading',
        'uploading',
        'retyping',
        'reverting',
        'managing',
      ],
    ],
    ['extending', ['available', 'in-use']],
    ['error_deleting', ['deleting']],
    ['creating', []],
  ] as const)('allowedSources(%s)', (to, sources) => {
    expect(sourcesOf(VOLUME_TRANSITIONS, to)).toEqual(sources);
  });
  it('deletable statuses are exactly the sources of deleting', () => {
    expect([...VOLUME_DELETABLE_STATUSES].sort()).toEqual(sourcesOf(VOLUME_TRANSITIONS, 'deleting').sort());
  });
  it('maps internal statuses to public ones', () => {
    expect(
      ['managing', 'error_managing', 'error_managing_deleting', 'in-use'].map((s) =>
        displayVolumeStatus(s as never),
      ),
    ).toEqual(['creating', 'error', 'deleting', 'in-use']);
  });
  it('never lets reset-status set deleting, error_deleting or detaching', () => {
    for (const s of ['deleting', 'error_deleting', 'detaching'])
      expect(VOLUME_RESETTABLE_STATUSES).not.toContain(s);
    expect(VOLUME_RESETTABLE_STATUSES).toContain('available');
  });
  it('assertTransition explains refusals', () => {
    expect(() => assertTransition(VOLUME_TRANSITIONS, 'volume', 'in-use', 'deleting')).toThrow(
      InvalidStateError,
    );
    expect(() => assertTransition(VOLUME_TRANSITIONS, 'volume', 'in-use', 'deleting')).toThrow(
      'Invalid volume: status must be available, error, error_restoring, error_extending, error_managing to become deleting, but it is in-use.',
    );
    expect(() => assertTransition(VOLUME_TRANSITIONS, 'volume', 'available', 'deleting')).not.toThrow();
  });
});

describe('snapshot transitions', () => {
  it('allows exactly the documented pairs', () => {
    checkPairs(
      SNAPSHOT_TRANSITIONS,
      `creating>available creating>error available>deleting available>backing-up available>restoring available>unmanaging
       deleting>error_deleting error>deleting backing-up>available restoring>available error>unmanaging`,
    );
    expect(sourcesOf(SNAPSHOT_TRANSITIONS, 'deleting')).toEqual(['available', 'error']);
  });
});

describe('backup and transfer transitions', () => {
  it('allows exactly the documented backup pairs', () => {
    checkPairs(
      BACKUP_TRANSITIONS,
      `creating>available creating>error available>deleting available>restoring deleting>deleted deleting>error_deleting
       error>deleting restoring>available`,
    );
    expect(sourcesOf(BACKUP_TRANSITIONS, 'deleting')).toEqual(['available', 'error']);
  });
  it('allows exactly the documented transfer pairs', () => {
    checkPairs(TRANSFER_TRANSITIONS, 'created>deleted created>accepted');
  });
});

describe('group and group snapshot transitions', () => {
  it('allows exactly the documented group pairs', () => {
    checkPairs(
      GROUP_TRANSITIONS,
      'creating>available creating>error available>updating available>deleting updating>available deleting>error_deleting error>deleting',
    );
  });
  it('allows exactly the documented group snapshot pairs', () => {
    checkPairs(
      GROUP_SNAPSHOT_TRANSITIONS,
      'creating>available creating>error available>deleting deleting>error_deleting error>deleting',
    );
  });
});

describe('os-update_snapshot_status', () => {
  it.each([
    ['creating', 'available', null],
    ['creating', 'error', null],
    ['creating', 'creating', null],
    ['deleting', 'error_deleting', null],
    ['deleting', 'deleting', null],
    [
      'creating',
      'deleting',
      'Provided snapshot status deleting not allowed for snapshot with status creating.',
    ],
    [
      'deleting',
      'available',
      'Provided snapshot status available not allowed for snapshot with status deleting.',
    ],
    ['available', 'error', 'Snapshot status available not allowed for update_snapshot_status'],
    ['error', 'available', 'Snapshot status error not allowed for update_snapshot_status'],
  ] as const)('%s → %s', (from, to, message) => {
    if (message === null) {
      expect(parseSnapshotStatusUpdate({ status: to }, from)).toEqual({ status: to, progress: null });
      expect(snapshotStatusUpdateSources(to)).toContain(from);
    } else {
      expect(() => parseSnapshotStatusUpdate({ status: to }, from)).toThrow(message);
    }
  });
  it('validates progress as an integer percentage and the body as strict', () => {
    expect(parseSnapshotStatusUpdate({ status: 'error', progress: '80%' }, 'creating').progress).toBe('80%');
    expect(parseSnapshotStatusUpdate({ status: 'error', progress: '' }, 'creating').progress).toBeNull();
    expect(() => parseSnapshotStatusUpdate({ status: 'error', progress: '101%' }, 'creating')).toThrow(
      'between 0 and 100',
    );
    expect(() => parseSnapshotStatusUpdate({ status: 'error', progress: 'abc%' }, 'creating')).toThrow(
      'integer percentage',
    );
    expect(() => parseSnapshotStatusUpdate({ status: 'error', progress: '80' }, 'creating')).toThrow();
    expect(() => parseSnapshotStatusUpdate({ status: 'error', extra: 1 }, 'creating')).toThrow(
      'Additional properties',
    );
    expect(() => parseSnapshotStatusUpdate({}, 'creating')).toThrow("'status' is a required property");
    expect(() => parseSnapshotStatusUpdate(null, 'creating')).toThrow("is not of type 'object'");
  });
});

describe('reserve, retype and migration guards', () => {
  it('reserves from available, and from in-use only for multiattach volumes', () => {
    expect(VOLUME_OPERATIONS.reserve.sources).toEqual(['available']);
    expect(VOLUME_OPERATIONS.reserveMultiattach.sources).toEqual(['available', 'in-use']);
    for (const s of [...VOLUME_OPERATIONS.reserveMultiattach.sources, ...VOLUME_RETYPE_SOURCES])
      expect(
        sourcesOf(VOLUME_TRANSITIONS, 'attaching').concat(sourcesOf(VOLUME_TRANSITIONS, 'retyping')),
      ).toContain(s);
  });
  it.each([
    [null, false],
    ['none', false],
    ['success', false],
    ['error', false],
    ['deleting', false],
    ['migrating', true],
    ['starting', true],
    ['completing', true],
  ] as const)('migration_status %p migrating: %p', (status, migrating) => {
    expect(isMigrating(status)).toBe(migrating);
  });
});
