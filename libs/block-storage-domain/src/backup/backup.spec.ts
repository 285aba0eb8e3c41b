import { parseMicroversion } from '../microversions/microversion';
import {
  backupDetailView,
  backupQuotaDeltas,
  exportRecordView,
  parseBackupResetStatus,
  parseCreateBackup,
  parseImportRecord,
  parseRestoreBackup,
  parseUpdateBackup,
  progressPercent,
  progressStepReached,
  wantsBackupProgress,
  type BackupValue,
} from './backup';

const mv = (v: string) => parseMicroversion(v);
const UUID = '5f6a8c52-1d0e-4f5b-9a3e-0b9f3a1f2c4d';
const links = { baseUrl: 'http://h', projectSegment: 'p', apiPrefix: 'v3' as const };
const backup: BackupValue = {
  id: UUID,
  projectId: 'p',
  userId: 'u',
  volumeId: UUID,
  snapshotId: null,
  parentId: null,
  name: 'n',
  description: null,
  status: 'available',
  failReason: null,
  size: 1,
  objectCount: 3,
  availabilityZone: 'nova',
  container: 'c',
  host: 'h@b',
  service: 'cinder.backup.drivers.posix.PosixBackupDriver',
  serviceMetadata: 'prefix',
  numDependentBackups: 1,
  metadata: { k: 'v' },
  encryptionKeyId: null,
  restoreVolumeId: null,
  dataTimestamp: '2026-01-01T00:00:00.000000',
  createdAt: '2026-01-01T00:00:00.000000',
  updatedAt: null,
};

describe('backup requests', () => {
  it('parses a create body and gates metadata (3.43) and availability_zone (3.51)', () => {
    expect(
      parseCreateBackup({ backup: { volume_id: UUID, incremental: 'true', force: true } }, mv('3.0')),
    ).toMatchObject({ volumeId: UUID, incremental: true, force: true, name: null, container: null });
    expect(() => parseCreateBackup({ backup: { volume_id: UUID, metadata: {} } }, mv('3.42'))).toThrow(
      /Additional properties are not allowed/,
    );
    expect(
      parseCreateBackup(
        { backup: { volume_id: UUID, metadata: { a: 'b' }, availability_zone: 'az' } },
        mv('3.51'),
      ),
    ).toMatchObject({ metadata: { a: 'b' }, availabilityZone: 'az' });
    expect(() => parseCreateBackup({ backup: {} }, mv('3.0'))).toThrow(/'volume_id' is a required property/);
    expect(() => parseCreateBackup({ backup: { volume_id: 'x' } }, mv('3.0'))).toThrow(
      /^Invalid input for field\/attribute volume_id/,
    );
    expect(() =>
      parseCreateBackup({ backup: { volume_id: UUID, incremental: 'maybe' } }, mv('3.0')),
    ).toThrow();
  });

  it('parses update, restore and reset-status bodies', () => {
    expect(parseUpdateBackup({ backup: { name: 'x' } }, mv('3.9'))).toEqual({ name: 'x' });
    expect(() => parseUpdateBackup({ backup: { metadata: {} } }, mv('3.9'))).toThrow(/Additional properties/);
    expect(parseRestoreBackup({ restore: {} })).toEqual({ volumeId: null, name: null });
    expect(() => parseRestoreBackup({ restore: { size: 1 } })).toThrow(/Additional properties/);
    expect(parseBackupResetStatus({ status: 'error' })).toBe('error');
    expect(() => parseBackupResetStatus({ status: 'creating' })).toThrow(/available and error/);
  });

  it('round-trips an export record through import and refuses bad records', () => {
    const exported = exportRecordView('cinder.backup.drivers.posix.PosixBackupDriver', backup)[
      'backup-record'
    ] as { backup_service: string; backup_url: string };
    const imported = parseImportRecord({ 'backup-record': exported });
    expect([imported.id, imported.size, imported.backupService, imported.record['service_metadata']]).toEqual(
      [UUID, 1, exported.backup_service, 'prefix'],
    );
    const encode = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');
    expect(() => parseImportRecord({ 'backup-record': { backup_service: 's', backup_url: '%%%' } })).toThrow(
      /base64/,
    );
    expect(() =>
      parseImportRecord({ 'backup-record': { backup_service: 's', backup_url: encode([1]) } }),
    ).toThrow(/JSON object/);
    expect(() =>
      parseImportRecord({ 'backup-record': { backup_service: 's', backup_url: encode({ size: 1 }) } }),
    ).toThrow(/valid id/);
    expect(() =>
      parseImportRecord({ 'backup-record': { backup_service: 's', backup_url: encode({ id: UUID }) } }),
    ).toThrow(/valid size/);
  });
});

describe('backup views and quota', () => {
  it('renders the detail view with gated and admin-only fields', () => {
    const low = backupDetailView({ mv: mv('3.0'), isAdmin: true, links }, backup);
    expect(Object.keys(low).sort()).toEqual(
      [
        'availability_zone',
        'container',
        'created_at',
        'data_timestamp',
        'description',
        'fail_reason',
        'has_dependent_backups',
        'id',
        'is_incremental',
        'links',
        'name',
        'object_count',
        'size',
        'snapshot_id',
        'status',
        'updated_at',
        'volume_id',
      ].sort(),
    );
    expect(low['has_dependent_backups']).toBe(true);
    const high = backupDetailView({ mv: mv('3.71'), isAdmin: true, links }, backup);
    expect([high['metadata'], high['os-backup-project-attr:project_id'], high['user_id']]).toEqual([
      { k: 'v' },
      'p',
      'u',
    ]);
    expect(backupDetailView({ mv: mv('3.71'), isAdmin: false, links }, backup)).not.toHaveProperty('user_id');
  });

  it('counts one backup and its size', () => {
    expect(backupQuotaDeltas(3, -1)).toEqual([
      { resource: 'backups', delta: -1 },
      { resource: 'backup_gigabytes', delta: -3 },
    ]);
  });
});

describe('backup progress (ours)', () => {
  it.each([
    [0, 100, 0],
    [99, 1000, 9],
    [999, 1000, 99],
    [1000, 1000, 100],
    [0, 0, 100],
    [5, 0, 100],
  ])('%i of %i bytes is %i%%', (done, total, percent) => {
    expect(progressPercent(done, total)).toBe(percent);
  });

  it.each([
    [0, 9, null],
    [0, 10, 10],
    [10, 19, null],
    [19, 20, 20],
    [5, 47, 40],
    [90, 100, 100],
    [100, 100, null],
    [-1, 0, null],
  ])('from %i%% to %i%% the story logs step %p', (before, after, step) => {
    expect(progressStepReached(before, after)).toBe(step);
  });

  it('shows the progress field only to a client that asks for it', () => {
    const running = { ...backup, status: 'creating' as const, progress: 42 };
    expect(backupDetailView({ mv: mv('3.71'), isAdmin: true, links }, running)).not.toHaveProperty([
      'os-backup-progress:progress',
    ]);
    expect(
      backupDetailView({ mv: mv('3.0'), isAdmin: false, links }, running, { progress: true }),
    ).toMatchObject({
      'os-backup-progress:progress': 42,
    });
    expect(
      backupDetailView({ mv: mv('3.0'), isAdmin: false, links }, backup, { progress: true }),
    ).toMatchObject({
      'os-backup-progress:progress': null,
    });
    expect([
      wantsBackupProgress('true'),
      wantsBackupProgress(' 1 '),
      wantsBackupProgress('no'),
      wantsBackupProgress(undefined),
    ]).toEqual([true, true, false, false]);
  });
});
