import { BACKUP_TRANSITIONS } from '../state/backup-status';
import { SNAPSHOT_TRANSITIONS } from '../state/snapshot-status';
import { canTransition } from '../state/transition-table';
import { VOLUME_TRANSITIONS, type VolumeStatus } from '../state/volume-status';
import { GROUP_SNAPSHOT_STATUSES, GROUP_STATUSES } from '../groups/groups';
import { MESSAGE_ACTIONS, MESSAGE_DETAILS } from './message-fields';
import {
  backupRecoveryJob,
  snapshotRecoveryJob,
  volumeRecoveryJob,
  type RecoverableVolume,
} from './recovery-jobs';
import {
  STUCK_RULES,
  decideStuck,
  quotaCorrections,
  transitionalStatuses,
  type StuckWork,
} from './stuck-work';

const bounds = { stuckAfterMs: 300_000, maxResumes: 1 };
const work = (over: Partial<StuckWork>): StuckWork => ({
  resource: 'volume',
  status: 'creating',
  idleMs: 301_000,
  worker: 'alive',
  jobInputs: true,
  resumes: 0,
  ...over,
});

describe('stuck-work rules', () => {
  it('covers exactly the transitional statuses of each status table', () => {
    expect(transitionalStatuses('volume').sort()).toEqual(
      [
        'attaching',
        'backing-up',
        'creating',
        'deleting',
        'detaching',
        'downloading',
        'extending',
        'maintenance',
        'managing',
        'reserved',
        'restoring-backup',
        'retyping',
        'reverting',
        'unmanaging',
        'uploading',
      ].sort(),
    );
    expect(transitionalStatuses('snapshot').sort()).toEqual([
      'backing-up',
      'creating',
      'deleting',
      'restoring',
      'unmanaging',
    ]);
    expect(transitionalStatuses('backup').sort()).toEqual(['creating', 'deleting', 'restoring']);
    expect(transitionalStatuses('group').sort()).toEqual(['creating', 'deleting', 'updating']);
    for (const s of transitionalStatuses('group')) expect(GROUP_STATUSES).toContain(s);
    for (const s of transitionalStatuses('group_snapshot')) expect(GROUP_SNAPSHOT_STATUSES).toContain(s);
  });

  it.each([
    ...Object.entries(STUCK_RULES.volume).map(([from, r]) => ['volume', from, r.endsIn] as const),
    ...Object.entries(STUCK_RULES.snapshot).map(([from, r]) => ['snapshot', from, r.endsIn] as const),
    ...Object.entries(STUCK_RULES.backup).map(([from, r]) => ['backup', from, r.endsIn] as const),
  ])('%s %s ends in %s, an edge of its transition table (unmanaging excepted)', (resource, from, to) => {
    if (from === 'unmanaging') return expect(to).toBe('error');
    const table =
      resource === 'volume'
        ? VOLUME_TRANSITIONS
        : resource === 'snapshot'
          ? SNAPSHOT_TRANSITIONS
          : BACKUP_TRANSITIONS;
    const targets = to === 'previous' ? ['available', 'in-use'] : [to];
    for (const t of targets)
      expect([from, t, canTransition(table as never, from as never, t as never)]).toEqual([from, t, true]);
  });

  it('names only Cinder message fields that exist', () => {
    for (const rules of Object.values(STUCK_RULES)) {
      for (const r of Object.values(rules)) {
        if (r.message === null) continue;
        expect(MESSAGE_ACTIONS[r.message.action]).toBeDefined();
        expect(MESSAGE_DETAILS[r.message.detail]).toBeDefined();
      }
    }
    expect(MESSAGE_ACTIONS['create-volume-from-backend']).toEqual([
      '008',
      'create volume from backend storage',
    ]);
    expect(MESSAGE_DETAILS['driver-failed-create']).toEqual(['012', 'Driver failed to create the volume.']);
    expect(MESSAGE_DETAILS['backup-service-down']).toEqual(['018', 'Backup service is down.']);
  });
});

describe('decideStuck', () => {
  it.each<[string, Partial<StuckWork>, string, string | null]>([
    // [case, work, action, end status]
    ['within the bound', { idleMs: 299_000 }, 'leave', null],
    ['not transitional', { status: 'available' }, 'leave', null],
    ['creating, worker alive, job rebuildable', {}, 'resume', null],
    ['creating, already resumed once', { resumes: 1 }, 'end', 'error'],
    ['creating, worker down', { worker: 'down' }, 'end', 'error'],
    ['creating, never placed', { worker: 'unplaced' }, 'end', 'error'],
    ['deleting, worker alive', { status: 'deleting' }, 'resume', null],
    ['deleting, worker down', { status: 'deleting', worker: 'down' }, 'end', 'error_deleting'],
    [
      'extending without its reservation',
      { status: 'extending', jobInputs: false },
      'end',
      'error_extending',
    ],
    ['extending with its reservation', { status: 'extending' }, 'resume', null],
    ['reverting without a restoring snapshot', { status: 'reverting', jobInputs: false }, 'end', 'error'],
    [
      'backing-up held by a live backup',
      { status: 'backing-up', holderLive: true, idleMs: 10_000_000 },
      'leave',
      null,
    ],
    ['backing-up whose backup is gone', { status: 'backing-up', holderLive: false }, 'end', 'previous'],
    [
      'restoring-backup whose restore is gone',
      { status: 'restoring-backup', holderLive: false },
      'end',
      'error_restoring',
    ],
    // attach states belong to the attaching client (attachments API), never timed out, as in Cinder
    ['attaching, however long', { status: 'attaching', idleMs: 10_000_000 }, 'leave', null],
    ['detaching, however long', { status: 'detaching', idleMs: 10_000_000 }, 'leave', null],
    ['reserved, however long', { status: 'reserved', idleMs: 10_000_000, worker: 'down' }, 'leave', null],
    [
      'migration running, destination alive',
      { status: 'available', migrationStatus: 'migrating' },
      'resume',
      null,
    ],
    [
      'migration running, destination down',
      { status: 'maintenance', migrationStatus: 'starting', worker: 'down' },
      'end',
      'previous',
    ],
    ['migration over, status available', { status: 'available', migrationStatus: 'success' }, 'leave', null],
    ['snapshot creating, worker alive', { resource: 'snapshot' }, 'resume', null],
    [
      'snapshot deleting, worker down',
      { resource: 'snapshot', status: 'deleting', worker: 'down' },
      'end',
      'error_deleting',
    ],
    [
      'snapshot backing-up, backup gone',
      { resource: 'snapshot', status: 'backing-up', holderLive: false },
      'end',
      'available',
    ],
    ['backup creating, worker alive but idle', { resource: 'backup' }, 'end', 'error'],
    ['backup creating, progressing', { resource: 'backup', idleMs: 1_000 }, 'leave', null],
    ['backup deleting, worker alive', { resource: 'backup', status: 'deleting' }, 'resume', null],
    [
      'backup deleting, worker down',
      { resource: 'backup', status: 'deleting', worker: 'down' },
      'end',
      'error_deleting',
    ],
    ['backup restoring', { resource: 'backup', status: 'restoring' }, 'end', 'available'],
    ['group creating', { resource: 'group' }, 'end', 'error'],
    ['group updating', { resource: 'group', status: 'updating' }, 'end', 'available'],
    ['group snapshot deleting', { resource: 'group_snapshot', status: 'deleting' }, 'end', 'error_deleting'],
  ])('%s', (_case, over, action, to) => {
    const d = decideStuck(work(over), bounds);
    expect(d.action).toBe(action);
    if (d.action === 'end') expect(d.to).toBe(to);
  });

  it('messages say why: back end down, never placed, driver failure', () => {
    expect(decideStuck(work({ worker: 'down' }), bounds)).toMatchObject({
      message: { action: 'create-volume-from-backend', detail: 'driver-not-initialized' },
      reason: 'creating for 301 s and its back end has not reported within the bound',
    });
    expect(decideStuck(work({ worker: 'unplaced' }), bounds)).toMatchObject({
      message: { action: 'schedule-allocate-volume', detail: 'unknown-error' },
    });
    expect(decideStuck(work({ resumes: 1 }), bounds)).toMatchObject({
      message: { action: 'create-volume-from-backend', detail: 'driver-failed-create' },
    });
    expect(decideStuck(work({ resource: 'backup', worker: 'down' }), bounds)).toMatchObject({
      message: { action: 'backup-create', detail: 'backup-service-down' },
    });
    expect(decideStuck(work({ status: 'backing-up', holderLive: false }), bounds)).toMatchObject({
      message: null,
    });
  });

  it('more resumes are allowed when configured', () => {
    expect(decideStuck(work({ resumes: 1 }), { ...bounds, maxResumes: 2 }).action).toBe('resume');
    expect(decideStuck(work({}), { ...bounds, maxResumes: 0 }).action).toBe('end');
  });
});

describe('recovery jobs', () => {
  const v = (over: Partial<RecoverableVolume>): RecoverableVolume => ({
    id: 'v1',
    status: 'creating',
    host: 'h@file#file',
    size: 2,
    availabilityZone: 'nova',
    sourceVolid: null,
    snapshotId: null,
    migrationStatus: null,
    adminMetadata: {},
    ...over,
  });
  const none = { extendNewSize: null, restoringSnapshotId: null };

  it('rebuild the back-end job on the owning back end, with a distinct id when resumed', () => {
    expect(volumeRecoveryJob(v({}), none)).toMatchObject({
      queue: 'block-storage.backend.h_file',
      id: 'volume-recover-v1',
      name: 'volume.create',
    });
    expect(volumeRecoveryJob(v({ status: 'deleting' }), none, '-r1')).toMatchObject({
      id: 'volume-delete-v1-r1',
      name: 'volume.delete',
      data: { volumeId: 'v1' },
    });
    expect(
      volumeRecoveryJob(v({ status: 'extending' }), { extendNewSize: 3, restoringSnapshotId: null }),
    ).toMatchObject({ data: { volumeId: 'v1', newSize: 3 }, attempts: 3 });
    expect(volumeRecoveryJob(v({ status: 'creating', snapshotId: 's1' }), none)).toMatchObject({
      data: { schedule: { source: { kind: 'snapshot', id: 's1', backend: 'h@file' } } },
    });
  });

  it('is null when the job cannot be rebuilt', () => {
    expect(volumeRecoveryJob(v({ host: null }), none)).toBeNull();
    expect(volumeRecoveryJob(v({ status: 'extending' }), none)).toBeNull();
    expect(volumeRecoveryJob(v({ status: 'reverting' }), none)).toBeNull();
    expect(volumeRecoveryJob(v({ status: 'available' as VolumeStatus }), none)).toBeNull();
    expect(backupRecoveryJob({ id: 'b', status: 'creating', host: 'h@file', importRecord: null })).toBeNull();
    expect(
      backupRecoveryJob({ id: 'b', status: 'deleting', host: 'h@file', importRecord: null }),
    ).toMatchObject({ queue: 'block-storage.backup.h_file', name: 'backup.delete' });
    expect(
      snapshotRecoveryJob({ id: 's', status: 'creating', host: 'h@file#file', manageSource: 'snapshot-x' }),
    ).toMatchObject({ name: 'snapshot.manage' });
  });
});

describe('quotaCorrections', () => {
  it('lists every drifted column, and stored keys no row counts for any more', () => {
    expect(
      quotaCorrections(
        {
          volumes: { inUse: 3, reserved: 0 },
          gigabytes: { inUse: 10, reserved: 2 },
          volumes_gold: { inUse: 1, reserved: 0 },
          backups: { inUse: 1, reserved: 0 },
        },
        {
          volumes: { inUse: 2, reserved: 0 },
          gigabytes: { inUse: 10, reserved: 0 },
          backups: { inUse: 1, reserved: 0 },
        },
      ),
    ).toEqual([
      { resource: 'gigabytes', column: 'reserved', stored: 2, counted: 0 },
      { resource: 'volumes', column: 'in_use', stored: 3, counted: 2 },
      { resource: 'volumes_gold', column: 'in_use', stored: 1, counted: 0 },
    ]);
    expect(
      quotaCorrections({ volumes: { inUse: 1, reserved: 0 } }, { volumes: { inUse: 1, reserved: 0 } }),
    ).toEqual([]);
  });
});
