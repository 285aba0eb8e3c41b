import { parseMicroversion } from '../microversions/microversion';
import {
  groupDetailView,
  parseCreateGroup,
  parseGroupFromSource,
  parseGroupSpecItem,
  parseResetStatus,
  parseUpdateGroup,
  settledGroupSnapshotStatus,
  settledGroupStatus,
  GROUP_STATUSES,
  type GroupValue,
} from './groups';
import {
  parseAcceptTransfer,
  parseCreateTransfer,
  transferCreateView,
  transferDetailView,
  transferKeyHash,
  transferKeyMatches,
  type TransferValue,
} from './transfers';

const links = { baseUrl: 'http://h', projectSegment: 'p1', apiPrefix: 'v3' as const };

describe('transfers', () => {
  const t: TransferValue = {
    id: 't1',
    volumeId: 'v1',
    name: null,
    salt: 'abcd1234',
    cryptHash: transferKeyHash('abcd1234', '0123456789abcdef'),
    noSnapshots: false,
    sourceProjectId: 'p1',
    destinationProjectId: null,
    accepted: false,
    createdAt: '2026-01-02T03:04:05.000006',
  };

  it('stores a salted keyed hash and matches only the right key', () => {
    expect(t.cryptHash).toMatch(/^[0-9a-f]{40}$/);
    expect(t.cryptHash).not.toBe(transferKeyHash('abcd1235', '0123456789abcdef'));
    expect(transferKeyMatches(t, '0123456789abcdef')).toBe(true);
    expect(transferKeyMatches(t, '0123456789abcdee')).toBe(false);
    expect(transferKeyMatches(t, '')).toBe(false);
  });

  it('parses create and accept bodies strictly', () => {
    const vid = '11111111-2222-3333-4444-555555555555';
    expect(parseCreateTransfer({ transfer: { volume_id: vid, name: ' x ' } }, false)).toEqual({
      volumeId: vid,
      name: 'x',
      noSnapshots: false,
    });
    expect(parseCreateTransfer({ transfer: { volume_id: vid, no_snapshots: true } }, true).noSnapshots).toBe(
      true,
    );
    expect(() => parseCreateTransfer({ transfer: { volume_id: vid, no_snapshots: true } }, false)).toThrow(
      /Additional properties/,
    );
    expect(() => parseCreateTransfer({ transfer: { volume_id: vid, name: '  ' } }, false)).toThrow(
      /only whitespace/,
    );
    expect(() => parseCreateTransfer({ transfer: {} }, false)).toThrow(/'volume_id' is a required property/);
    expect(parseAcceptTransfer({ accept: { auth_key: 1234 } })).toBe('1234');
    expect(() => parseAcceptTransfer({ accept: { auth_key: true } })).toThrow();
    expect(() => parseAcceptTransfer({ accept: { auth_key: 'k', other: 1 } })).toThrow(
      /Additional properties/,
    );
  });

  it('renders fields by microversion and the auth key only on create', () => {
    const at = (v: string) => ({ mv: parseMicroversion(v), links });
    expect(Object.keys(transferDetailView(at('3.0'), t)).sort()).toEqual([
      'created_at',
      'id',
      'links',
      'name',
      'volume_id',
    ]);
    expect(transferDetailView(at('3.55'), t)).toHaveProperty('no_snapshots', false);
    expect(transferDetailView(at('3.57'), t)).toMatchObject({
      source_project_id: 'p1',
      destination_project_id: null,
      accepted: false,
    });
    expect(transferCreateView(at('3.0'), t, 'k')['auth_key']).toBe('k');
    expect(transferDetailView(at('3.0'), t)['links']).toEqual([
      { rel: 'self', href: 'http://h/v3/p1/os-volume-transfer/t1' },
      { rel: 'bookmark', href: 'http://h/p1/os-volume-transfer/t1' },
    ]);
  });
});

describe('groups', () => {
  it('parses create, update and from-source bodies with Cinder refusals', () => {
    expect(
      parseCreateGroup({ group: { group_type: 'gt', volume_types: ['a', 'b', 'a'], name: 'n' } }),
    ).toMatchObject({ groupType: 'gt', volumeTypes: ['a', 'b'], name: 'n' });
    expect(parseCreateGroup({ group: { group_type: 'gt', volume_types: 'a, b' } }).volumeTypes).toEqual([
      'a',
      'b',
    ]);
    expect(() => parseCreateGroup({ group: { group_type: 'gt' } })).toThrow(
      "Invalid input received: 'volume_types' must be specified.",
    );
    expect(() => parseCreateGroup({ group: { volume_types: ['a'] } })).toThrow(
      "Invalid input received: 'group_type' must be specified.",
    );
    expect(parseUpdateGroup({ group: { add_volumes: 'a,b', remove_volumes: '' } }, 'group', true)).toEqual({
      addVolumes: ['a', 'b'],
      removeVolumes: [],
    });
    expect(() => parseUpdateGroup({ group: {} }, 'group', true)).toThrow(/can not be all empty/);
    expect(() => parseUpdateGroup({ consistencygroup: { name: '' } }, 'consistencygroup', false)).toThrow(
      /can not be all empty/,
    );
    expect(parseUpdateGroup({ consistencygroup: { name: '' } }, 'consistencygroup', true).name).toBe('');
    expect(() =>
      parseUpdateGroup({ group: { add_volumes: 'a', remove_volumes: 'a' } }, 'group', true),
    ).toThrow(/both added to and removed/);
    expect(() => parseGroupFromSource({ 'create-from-src': {} }, 'create-from-src')).toThrow(
      /must be provided/,
    );
    const id = '11111111-2222-3333-4444-555555555555';
    expect(() =>
      parseGroupFromSource(
        { 'consistencygroup-from-src': { cgsnapshot_id: id, source_cgid: id } },
        'consistencygroup-from-src',
      ),
    ).toThrow(/both/);
    expect(
      parseGroupFromSource({ 'consistencygroup-from-src': { source_cgid: id } }, 'consistencygroup-from-src'),
    ).toMatchObject({ sourceGroupId: id, snapshotId: null });
    expect(parseGroupSpecItem('k', { k: 'v' })).toBe('v');
    expect(() => parseGroupSpecItem('k', { j: 'v' })).toThrow(/mismatch/);
    expect(parseResetStatus({ status: 'error' }, GROUP_STATUSES)).toBe('error');
    expect(() => parseResetStatus({ status: 'deleted' }, GROUP_STATUSES)).toThrow(/Status must be one of/);
  });

  it('renders group fields by microversion', () => {
    const g: GroupValue = {
      id: 'g',
      projectId: 'p',
      userId: 'u',
      name: 'n',
      description: null,
      availabilityZone: 'nova',
      host: 'h@b#p',
      status: 'available',
      pending: false,
      groupTypeId: 'gt',
      groupSnapshotId: null,
      sourceGroupId: null,
      replicationStatus: 'disabled',
      volumeTypeIds: ['vt'],
      createdAt: '2026-01-02T03:04:05.000006',
    };
    expect(Object.keys(groupDetailView(parseMicroversion('3.13'), g, ['v'])).sort()).toEqual([
      'availability_zone',
      'created_at',
      'description',
      'group_type',
      'id',
      'name',
      'status',
      'volume_types',
    ]);
    const latest = groupDetailView(parseMicroversion('3.58'), g, ['v']);
    expect(latest).toMatchObject({
      group_snapshot_id: null,
      source_group_id: null,
      volumes: ['v'],
      replication_status: 'disabled',
      project_id: 'p',
    });
    expect(groupDetailView(parseMicroversion('3.58'), g, null)).not.toHaveProperty('volumes');
  });

  it('settles groups and group snapshots from their members', () => {
    expect(settledGroupSnapshotStatus('creating', ['available', 'creating'])).toBeNull();
    expect(settledGroupSnapshotStatus('creating', ['available', 'available'])).toBe('available');
    expect(settledGroupSnapshotStatus('creating', ['available', 'error'])).toBe('error');
    expect(settledGroupSnapshotStatus('deleting', [])).toBe('deleted');
    expect(settledGroupSnapshotStatus('deleting', ['deleting'])).toBeNull();
    expect(settledGroupSnapshotStatus('deleting', ['error_deleting'])).toBe('error_deleting');
    expect(settledGroupSnapshotStatus('available', [])).toBeNull();
    expect(settledGroupStatus('creating', ['available'])).toBe('available');
    expect(settledGroupStatus('creating', ['creating', 'error'])).toBe('error');
    expect(settledGroupStatus('deleting', ['deleting', 'error_deleting'])).toBeNull();
    expect(settledGroupStatus('deleting', ['error_deleting'])).toBe('error_deleting');
    expect(settledGroupStatus('deleting', [])).toBe('deleted');
  });
});
