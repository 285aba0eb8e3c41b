import { InvalidInputError, OverLimitError } from '@osc/errors';
import {
  absoluteLimits,
  checkPerVolumeSize,
  checkQuota,
  parseQuotaUpdate,
  quotaSetView,
  snapshotQuotaDeltas,
  volumeQuotaDeltas,
} from './quota';

describe('quota checks', () => {
  it.each([
    ['fits the defaults', volumeQuotaDeltas(5, 'gold'), {}, {}, null],
    [
      'counts reserved usage',
      volumeQuotaDeltas(1, null),
      { volumes: 2 },
      { volumes: { inUse: 1, reserved: 1 } },
      "VolumeLimitExceeded: Maximum number of volumes allowed (2) exceeded for quota 'volumes'.",
    ],
    [
      'reports size before count',
      volumeQuotaDeltas(10, null),
      { volumes: 0, gigabytes: 5 },
      {},
      'VolumeSizeExceedsAvailableQuota: Requested volume or snapshot exceeds allowed gigabytes quota. Requested 10G, quota is 5G and 0G has been consumed.',
    ],
    [
      'checks per-type keys',
      volumeQuotaDeltas(1, 'gold'),
      { volumes_gold: 1 },
      { volumes_gold: { inUse: 1, reserved: 0 } },
      "VolumeLimitExceeded: Maximum number of volumes allowed (1) exceeded for quota 'volumes_gold'.",
    ],
    [
      'checks per-type gigabytes',
      volumeQuotaDeltas(3, 'gold'),
      { gigabytes_gold: 4 },
      { gigabytes_gold: { inUse: 2, reserved: 0 } },
      /gigabytes_gold quota. Requested 3G, quota is 4G and 2G/,
    ],
    ['ignores unlimited', volumeQuotaDeltas(5000, null), { volumes: -1, gigabytes: -1 }, {}, null],
    ['ignores releases', volumeQuotaDeltas(5, null, -1), { volumes: 0, gigabytes: 0 }, {}, null],
    [
      'limits snapshots',
      snapshotQuotaDeltas(1, null),
      { snapshots: 0 },
      {},
      "SnapshotLimitExceeded: Maximum number of snapshots allowed (0) exceeded for quota 'snapshots'.",
    ],
    ['limits backups', [{ resource: 'backups', delta: 1 }], { backups: 0 }, {}, /^BackupLimitExceeded: /],
    [
      'limits backup gigabytes',
      [{ resource: 'backup_gigabytes', delta: 2 }],
      { backup_gigabytes: 1 },
      {},
      /^VolumeBackupSizeExceedsAvailableQuota: /,
    ],
    ['limits groups', [{ resource: 'groups', delta: 1 }], { groups: 0 }, {}, /^GroupLimitExceeded: /],
    [
      'uses the default 10 volumes',
      volumeQuotaDeltas(1, null),
      {},
      { volumes: { inUse: 10, reserved: 0 } },
      /allowed \(10\)/,
    ],
  ])('%s', (_name, deltas, limits, usages, expected) => {
    const run = (): void => checkQuota(deltas, limits, usages);
    if (expected === null) expect(run).not.toThrow();
    else {
      expect(run).toThrow(OverLimitError);
      expect(run).toThrow(expected);
      try {
        run();
      } catch (e) {
        expect((e as OverLimitError).retryAfter).toBeUndefined();
      }
    }
  });
  it('checks the per-volume size limit', () => {
    expect(() => checkPerVolumeSize(5, {})).not.toThrow();
    expect(() => checkPerVolumeSize(5, { per_volume_gigabytes: 4 })).toThrow(
      /^VolumeSizeExceedsLimit: Requested volume size 5G is larger than maximum allowed limit 4G/,
    );
    expect(() => checkPerVolumeSize(4, { per_volume_gigabytes: 4 })).not.toThrow();
  });
});

describe('quota views and updates', () => {
  const usages = { volumes: { inUse: 3, reserved: 1 }, gigabytes: { inUse: 7, reserved: 0 } };
  it('renders absolute limits with committed usage', () => {
    expect(absoluteLimits({ volumes: 20 }, usages)).toEqual({
      maxTotalVolumes: 20,
      maxTotalSnapshots: 10,
      maxTotalVolumeGigabytes: 1000,
      maxTotalBackups: 10,
      maxTotalBackupGigabytes: 1000,
      totalVolumesUsed: 3,
      totalGigabytesUsed: 7,
      totalSnapshotsUsed: 0,
      totalBackupsUsed: 0,
      totalBackupGigabytesUsed: 0,
    });
  });
  it('renders quota sets with and without usage', () => {
    expect(quotaSetView('p', ['volumes', 'volumes_gold'], {}, null)).toEqual({
      quota_set: { id: 'p', volumes: 10, volumes_gold: -1 },
    });
    expect(quotaSetView('p', ['volumes'], {}, usages)).toEqual({
      quota_set: { id: 'p', volumes: { limit: 10, in_use: 3, reserved: 1 } },
    });
  });
  it.each([
    [{ quota_set: { volumes: 5, gigabytes: '-1' } }, { volumes: 5, gigabytes: -1 }],
    [{ quota_set: { bogus: 1, volumes: 1 } }, /Bad key\(s\) in quota set: bogus/],
    // python-cinderclient's quota-update always sends tenant_id; Cinder ignores it and id
    [{ quota_set: { tenant_id: 'p', id: 'p', volumes: 5 } }, { volumes: 5 }],
    [{ quota_set: { volumes: -2 } }, /minimum of -1/],
    [{ quota_set: { volumes: 3 } }, /volumes has 4 in use, limit 3/],
    [{ quota_set: { volumes: 'x' } }, InvalidInputError],
    [{}, /'quota_set' is a required property/],
  ])('parseQuotaUpdate(%p)', (body, expected) => {
    const run = (): unknown => parseQuotaUpdate(body, ['volumes', 'gigabytes'], usages);
    if (expected instanceof RegExp || typeof expected === 'function') expect(run).toThrow(expected as RegExp);
    else expect(run()).toEqual(expected);
  });
});
