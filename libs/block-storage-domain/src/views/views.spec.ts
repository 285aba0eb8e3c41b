import { parseMicroversion } from '../microversions/microversion';
import type { SnapshotValue, VolumeTypeValue, VolumeValue } from '../model/resources';
import { formatTimestamp, nextPageLink, resourceLinks, type LinkContext } from './links';
import { snapshotView } from './snapshot.view';
import {
  encryptionView,
  volumeTypeCreateView,
  volumeTypeUpdateView,
  volumeTypeView,
} from './volume-type.view';
import { volumeDetailView, volumeSummaryView, type ViewContext } from './volume.view';

const P = '0123456789abcdef0123456789abcdef';
const links: LinkContext = { baseUrl: 'http://h:8776/', projectSegment: P, apiPrefix: 'v3' };
const ctx = (mv: string, isAdmin: boolean, l: LinkContext = links): ViewContext => ({
  mv: parseMicroversion(mv),
  isAdmin,
  links: l,
});

const volume: VolumeValue = {
  id: 'v1',
  projectId: P,
  userId: 'u1',
  name: 'vol',
  description: null,
  size: 2,
  status: 'managing',
  availabilityZone: 'nova',
  volumeTypeId: 't1',
  volumeTypeName: 'gold',
  snapshotId: null,
  sourceVolid: null,
  metadata: { a: 'b' },
  adminMetadata: { readonly: 'True', secret: 'x' },
  imageMetadata: null,
  bootable: false,
  encrypted: true,
  encryptionKeyId: 'k1',
  multiattach: false,
  host: 'h@b#p',
  clusterName: null,
  providerId: null,
  serviceUuid: 's1',
  sharedTargets: null,
  migrationStatus: null,
  nameId: null,
  replicationStatus: 'disabled',
  consistencygroupId: null,
  groupId: null,
  consumesQuota: true,
  attachments: [
    {
      id: 'a1',
      volumeId: 'v1',
      serverId: 'srv',
      hostName: 'hst',
      device: '/dev/vdb',
      attachedAt: new Date('2024-01-02T03:04:05.678Z'),
      attachStatus: 'attached',
    },
    {
      id: 'a2',
      volumeId: 'v1',
      serverId: 'srv2',
      hostName: null,
      device: null,
      attachedAt: null,
      attachStatus: 'attaching',
    },
  ],
  createdAt: '2024-01-02 03:04:05.123456',
  updatedAt: null,
};

describe('timestamps and links', () => {
  it.each([
    [new Date('2024-01-02T03:04:05.678Z'), '2024-01-02T03:04:05.678000'],
    ['2024-01-02 03:04:05.123456', '2024-01-02T03:04:05.123456'],
    ['2024-01-02T03:04:05Z', '2024-01-02T03:04:05.000000'],
    ['2024-01-02T03:04:05.1+00:00', '2024-01-02T03:04:05.100000'],
    ['2024-01-02T05:04:05.5+02:00', '2024-01-02T03:04:05.500000'],
    [null, null],
    ['garbage', null],
  ])('formatTimestamp(%p) = %p', (input, expected) => {
    expect(formatTimestamp(input)).toBe(expected);
  });
  it('builds self/bookmark links with and without the project segment', () => {
    expect(resourceLinks(links, 'volumes', 'x')).toEqual([
      { rel: 'self', href: `http://h:8776/v3/${P}/volumes/x` },
      { rel: 'bookmark', href: `http://h:8776/${P}/volumes/x` },
    ]);
    expect(resourceLinks({ ...links, projectSegment: null }, 'types', 'y')).toEqual([
      { rel: 'self', href: 'http://h:8776/v3/types/y' },
      { rel: 'bookmark', href: 'http://h:8776/types/y' },
    ]);
  });
  it('builds next links with every original parameter', () => {
    expect(
      nextPageLink(
        links,
        'volumes/detail',
        { limit: '2', marker: 'old', sort: 'name:asc', status: ['a', 'b'] },
        'last',
      ),
    ).toEqual({
      rel: 'next',
      href: `http://h:8776/v3/${P}/volumes/detail?limit=2&sort=name%3Aasc&status=a&status=b&marker=last`,
    });
  });
});

describe('volume views', () => {
  it('renders the 3.0 detail view for a member', () => {
    const view = volumeDetailView(ctx('3.0', false), volume, 'show');
    expect(view).toEqual({
      id: 'v1',
      name: 'vol',
      description: null,
      status: 'creating',
      size: 2,
      availability_zone: 'nova',
      created_at: '2024-01-02T03:04:05.123456',
      updated_at: null,
      volume_type: 'gold',
      snapshot_id: null,
      source_volid: null,
      metadata: { a: 'b', readonly: 'True' },
      links: resourceLinks(links, 'volumes', 'v1'),
      user_id: 'u1',
      bootable: 'false',
      encrypted: true,
      replication_status: 'disabled',
      consistencygroup_id: null,
      multiattach: false,
      attachments: [
        {
          id: 'v1',
          attachment_id: 'a1',
          volume_id: 'v1',
          server_id: 'srv',
          host_name: null,
          device: '/dev/vdb',
          attached_at: '2024-01-02T03:04:05.678000',
        },
      ],
      'os-vol-tenant-attr:tenant_id': P,
    });
  });
  it.each([
    ['3.12', false, []],
    ['3.13', false, ['group_id']],
    ['3.21', false, ['group_id']],
    ['3.21', true, ['group_id', 'provider_id']],
    ['3.48', false, ['group_id', 'shared_targets', 'service_uuid']],
    ['3.61', true, ['group_id', 'provider_id', 'shared_targets', 'service_uuid', 'cluster_name']],
    ['3.63', false, ['group_id', 'shared_targets', 'service_uuid', 'volume_type_id']],
    ['3.64', false, ['group_id', 'shared_targets', 'service_uuid', 'volume_type_id', 'encryption_key_id']],
    [
      '3.65',
      false,
      ['group_id', 'shared_targets', 'service_uuid', 'volume_type_id', 'encryption_key_id', 'consumes_quota'],
    ],
  ])('at %s (admin %p) adds %p', (mv, admin, added) => {
    const base = Object.keys(volumeDetailView(ctx('3.0', admin as boolean), volume, 'create'));
    const keys = Object.keys(volumeDetailView(ctx(mv, admin as boolean), volume, 'create'));
    expect(keys.filter((k) => !base.includes(k))).toEqual(added);
  });
  it('shows null shared_targets as true below 3.69', () => {
    expect(volumeDetailView(ctx('3.68', false), volume, 'show')['shared_targets']).toBe(true);
    expect(volumeDetailView(ctx('3.69', false), volume, 'show')['shared_targets']).toBeNull();
  });
  it('hides encryption_key_id for unencrypted volumes', () => {
    expect(volumeDetailView(ctx('3.71', false), { ...volume, encrypted: false }, 'show')).not.toHaveProperty(
      'encryption_key_id',
    );
  });
  it('adds admin attributes to show views only', () => {
    const show = volumeDetailView(ctx('3.0', true), volume, 'show');
    expect(show['os-vol-host-attr:host']).toBe('h@b#p');
    expect(show).toHaveProperty('migration_status', null);
    expect(show).toHaveProperty('os-vol-mig-status-attr:name_id', null);
    const create = volumeDetailView(ctx('3.0', true), volume, 'create');
    expect(create).not.toHaveProperty('os-vol-host-attr:host');
    expect(create).not.toHaveProperty('os-vol-tenant-attr:tenant_id');
    expect((create['attachments'] as { host_name: string }[])[0]!.host_name).toBe('hst');
  });
  it('renders image metadata when present', () => {
    expect(
      volumeDetailView(ctx('3.0', false), { ...volume, imageMetadata: { image_id: 'i' } }, 'list')[
        'volume_image_metadata'
      ],
    ).toEqual({ image_id: 'i' });
  });
  it('renders the summary view', () => {
    expect(volumeSummaryView(ctx('3.0', false, { ...links, projectSegment: null }), volume)).toEqual({
      id: 'v1',
      name: 'vol',
      links: [
        { rel: 'self', href: 'http://h:8776/v3/volumes/v1' },
        { rel: 'bookmark', href: 'http://h:8776/volumes/v1' },
      ],
    });
  });
});

describe('volume type views', () => {
  const type: VolumeTypeValue = {
    id: 't1',
    name: 'gold',
    description: 'd',
    isPublic: false,
    extraSpecs: { multiattach: '<is> True', volume_backend_name: 'b', 'RESKEY:availability_zones': 'nova' },
    qosSpecsId: null,
  };
  it('filters specs and qos for members', () => {
    expect(volumeTypeView(type, false)).toEqual({
      id: 't1',
      name: 'gold',
      description: 'd',
      is_public: false,
      'os-volume-type-access:is_public': false,
      extra_specs: { 'RESKEY:availability_zones': 'nova', multiattach: '<is> True' },
    });
    expect(volumeTypeView(type, true)).toEqual({
      id: 't1',
      name: 'gold',
      description: 'd',
      is_public: false,
      'os-volume-type-access:is_public': false,
      extra_specs: type.extraSpecs,
      qos_specs_id: null,
    });
  });
  it('renders create and update views with their exact key sets', () => {
    expect(Object.keys(volumeTypeCreateView(type)).sort()).toEqual([
      'description',
      'extra_specs',
      'id',
      'is_public',
      'name',
      'os-volume-type-access:is_public',
    ]);
    expect(Object.keys(volumeTypeUpdateView(type)).sort()).toEqual([
      'description',
      'extra_specs',
      'id',
      'is_public',
      'name',
    ]);
  });
  it('renders the encryption object', () => {
    expect(
      encryptionView({
        encryptionId: 'e',
        volumeTypeId: 't',
        provider: 'luks',
        cipher: null,
        keySize: 256,
        controlLocation: 'front-end',
        createdAt: new Date(0),
        updatedAt: null,
      }),
    ).toEqual({
      volume_type_id: 't',
      encryption_id: 'e',
      provider: 'luks',
      cipher: null,
      key_size: 256,
      control_location: 'front-end',
      created_at: '1970-01-01T00:00:00.000000',
      updated_at: null,
      deleted: false,
      deleted_at: null,
    });
  });
});

describe('snapshot views', () => {
  const snap: SnapshotValue = {
    id: 's1',
    projectId: P,
    userId: 'u',
    volumeId: 'v1',
    name: 's',
    description: null,
    size: 1,
    status: 'available',
    progress: null,
    metadata: {},
    groupSnapshotId: null,
    consumesQuota: true,
    createdAt: new Date(0),
    updatedAt: null,
  };
  it.each([
    [
      '3.0',
      false,
      ['id', 'created_at', 'updated_at', 'name', 'description', 'status', 'size', 'volume_id', 'metadata'],
    ],
    [
      '3.41',
      false,
      [
        'id',
        'created_at',
        'updated_at',
        'name',
        'description',
        'status',
        'size',
        'volume_id',
        'metadata',
        'group_snapshot_id',
        'user_id',
      ],
    ],
    [
      '3.65',
      true,
      [
        'id',
        'created_at',
        'updated_at',
        'name',
        'description',
        'status',
        'size',
        'volume_id',
        'metadata',
        'group_snapshot_id',
        'user_id',
        'consumes_quota',
        'os-extended-snapshot-attributes:project_id',
        'os-extended-snapshot-attributes:progress',
      ],
    ],
  ])('at %s (detail %p) has keys %p', (mv, detail, keys) => {
    expect(Object.keys(snapshotView(ctx(mv, false), snap, detail as boolean))).toEqual(keys);
  });
  it('reports progress', () => {
    expect(snapshotView(ctx('3.0', false), snap, true)['os-extended-snapshot-attributes:progress']).toBe(
      '100%',
    );
    expect(
      snapshotView(ctx('3.0', false), { ...snap, status: 'creating' }, true)[
        'os-extended-snapshot-attributes:progress'
      ],
    ).toBe('0%');
  });
});
