import {
  type FuzzAnswer,
  type FuzzRequest,
  type FuzzRoute,
  type FuzzTarget,
  type Rng,
  fuzzPlan,
  routeCases,
  runFuzz,
} from '@osc/testing';
import { FakeKeystone } from '@osc/http-common';
import {
  ADMIN_PROJECT,
  admin,
  Client,
  MODES,
  type Reply,
  startBlockStorage,
  type BlockStorage,
} from './harness';

/**
 * Fuzzing the whole Cinder API (BS-1.9, issue #15 item 5): 10,000 generated requests per mode
 * (embedded and distributed) aimed at every registered route (v3 with and without the project
 * segment, v2: the route table the cross-project suite walks), each making one part odd while the
 * rest stays well-formed: the body (mutated bodies, values of the wrong type, huge and unicode
 * strings, deep nesting, over VOLUME_API_BODY_LIMIT, chunked), the query string (limit, marker,
 * sort, filters with odd values, repeated keys, broken percent-encoding), a path parameter
 * (malformed uuids, very long names) or the headers (content type, OpenStack-API-Version,
 * X-Auth-Token and the identity headers keystonemiddleware sets; the API runs in keystone mode
 * against a FakeKeystone). Every answer is a 2xx, 3xx or 4xx; every 4xx is a Cinder fault
 * (`{"<fault>": {"code", "message"}}`) or keystonemiddleware's own 401; no request goes unanswered
 * (a reset is a finding).
 *
 * The cases are seeded: the run prints its seed, `FUZZ_SEED=<n>` changes it, `FUZZ_CASES=<i,j>`
 * replays single cases and `FUZZ_COUNT=<n>` sets the count. Eight requests are in flight at once
 * over keep-alive connections.
 */
const COUNT = Number(process.env['FUZZ_COUNT'] ?? 10_000);
const CONCURRENCY = 8;
const BODY_LIMIT = 112 * 1024;
const P = ADMIN_PROJECT;
const FAULTS = new Set([
  'badRequest',
  'unauthorized',
  'forbidden',
  'itemNotFound',
  'badMethod',
  'conflictingRequest',
  'overLimit',
  'badMediaType',
  'computeFault',
  'notImplemented',
]);
const MISSING = '0f0f0f0f-0f0f-4f0f-8f0f-0f0f0f0f0f0f';
/** Keystone tokens: the API runs in keystone mode against a FakeKeystone. */
const TOKENS = {
  admin: 'fz-admin-token',
  member: 'fz-member-token',
  reader: 'fz-reader-token',
  other: 'fz-other-project-token',
} as const;
/** keystonemiddleware's own answer to a missing or invalid token. */
const KEYSTONE_401 = {
  error: { code: 401, title: 'Unauthorized', message: 'The request you have made requires authentication.' },
};

/** The harness client with the admin's Keystone token on every request (seeding). */
class TokenClient extends Client {
  override raw(
    method: string,
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Reply> {
    return super.raw(method, url, body, { 'x-auth-token': TOKENS.admin, ...headers });
  }
}

const QUERY_KEYS = [
  'limit',
  'offset',
  'marker',
  'sort',
  'sort_key',
  'sort_dir',
  'with_count',
  'all_tenants',
  'project_id',
  'metadata',
  'glance_metadata',
  'created_at',
  'updated_at',
  'bootable',
  'consumes_quota',
  'is_public',
  'extra_specs',
  'name',
  'name~',
  'status',
  'size',
  'volume_type',
  'volume_type_id',
  'usage',
  'group_id',
  'availability_zone',
  'host',
  'backend_name',
  'volume_id',
  'snapshot_id',
  'instance_id',
  'attach_status',
  'binary',
  'service',
  'cluster_name',
  'vol_type_id',
  'detail',
  'fields',
  'event_id',
  'resource_uuid',
  'message_level',
  'request_id',
  'bogus',
];
const SANE_VALUES: Record<string, readonly string[]> = {
  limit: ['1', '2', '10', '1000'],
  offset: ['0', '1', '5'],
  sort: ['name:asc', 'created_at:desc,id', 'size', 'status:asc'],
  sort_key: ['name', 'created_at', 'size', 'id'],
  sort_dir: ['asc', 'desc'],
  with_count: ['true', 'false'],
  all_tenants: ['1', '0', 'true'],
  is_public: ['true', 'false', 'None'],
  bootable: ['true', 'false'],
  metadata: ['{"k":"v"}', "{'k':'v'}"],
  created_at: ['gt:2020-01-01', 'lte:2100-01-01T00:00:00'],
  status: ['available', 'error', 'in-use'],
  usage: ['true', 'false'],
  detail: ['true', 'false'],
};
const VERSIONS = [
  '3.0',
  '3.1',
  '3.9',
  '3.13',
  '3.27',
  '3.31',
  '3.34',
  '3.40',
  '3.44',
  '3.47',
  '3.55',
  '3.60',
  '3.62',
  '3.64',
  '3.66',
  '3.67',
  '3.70',
  '3.71',
  'latest',
];

describe.each(MODES)('fuzzing every route of the block-storage API (%s)', (mode) => {
  let bs: BlockStorage;
  let api: Client;
  const keystone = new FakeKeystone();
  const pools: Record<string, string[]> = {};
  /** Resources DELETE routes may remove: the other routes keep theirs to the end of the run. */
  const spares: Record<string, string[]> = {};

  const ok = async (p: Promise<Reply>): Promise<any> => {
    const r = await p;
    if (r.status >= 300) throw new Error(`${r.status} ${r.text.slice(0, 300)}`);
    return r.body;
  };
  const poll = async (path: string, key: string, statuses: string[]): Promise<void> => {
    for (;;) {
      const r = await api.get(path);
      const s = r.body?.[key]?.status;
      if (statuses.includes(s)) return;
      if (r.status >= 400 || s === 'error') throw new Error(`${path}: ${r.status} ${r.text.slice(0, 300)}`);
      await new Promise((res) => setImmediate(res));
    }
  };
  const volume = async (name: string, type?: string): Promise<string> => {
    const id = (
      await ok(
        api.post('/volumes', {
          volume: { size: 1, name, metadata: { k: 'v' }, ...(type ? { volume_type: type } : {}) },
        }),
      )
    ).volume.id;
    await poll(`/volumes/${id}`, 'volume', ['available']);
    return id;
  };

  /** Two of most resources: the first for every route, the second for DELETE. */
  const seedResources = async (): Promise<void> => {
    const type = (await ok(api.post('/types', { volume_type: { name: `fz-type-${mode}` } }))).volume_type.id;
    const spareType = (await ok(api.post('/types', { volume_type: { name: `fz-spare-type-${mode}` } })))
      .volume_type.id;
    const encType = (
      await ok(api.post('/types', { volume_type: { name: `fz-enc-type-${mode}`, extra_specs: { k: 'v' } } }))
    ).volume_type.id;
    await ok(
      api.post(`/types/${encType}/encryption`, {
        encryption: {
          provider: 'luks',
          control_location: 'front-end',
          cipher: 'aes-xts-plain64',
          key_size: 256,
        },
      }),
    );
    const groupType = (
      await ok(api.post('/group_types', { group_type: { name: `fz-gt-${mode}`, group_specs: { k: 'v' } } }))
    ).group_type.id;
    const spareGroupType = (
      await ok(api.post('/group_types', { group_type: { name: `fz-spare-gt-${mode}` } }))
    ).group_type.id;
    const qos = (
      await ok(
        api.post('/qos-specs', { qos_specs: { name: `fz-qos-${mode}`, consumer: 'back-end', k: 'v' } }),
      )
    ).qos_specs.id;
    const spareQos = (await ok(api.post('/qos-specs', { qos_specs: { name: `fz-spare-qos-${mode}` } })))
      .qos_specs.id;
    const vol = await volume('fz-vol', type);
    const spareVol = await volume('fz-spare-vol');
    const transferVol = await volume('fz-transfer-vol');
    const attachVol = await volume('fz-attach-vol');
    // Snapshots, backups and group snapshots take long to finish on a busy machine: the run starts
    // while they are being made (their routes see them in whatever state they are in).
    const snap = (
      await ok(
        api.post('/snapshots', { snapshot: { volume_id: vol, name: 'fz-snap', metadata: { k: 'v' } } }),
      )
    ).snapshot.id;
    const spareSnap = (
      await ok(api.post('/snapshots', { snapshot: { volume_id: vol, name: 'fz-spare-snap' } }))
    ).snapshot.id;
    const backup = (await ok(api.post('/backups', { backup: { volume_id: spareVol, name: 'fz-backup' } })))
      .backup.id;
    const transfer = (
      await ok(api.post('/volume-transfers', { transfer: { volume_id: transferVol, name: 'fz-transfer' } }))
    ).transfer.id;
    const group = (
      await ok(
        api.post('/groups', { group: { group_type: groupType, volume_types: [type], name: 'fz-group' } }),
      )
    ).group.id;
    await poll(`/groups/${group}`, 'group', ['available']);
    const groupSnap = (
      await ok(api.post('/group_snapshots', { group_snapshot: { group_id: group, name: 'fz-gs' } }))
    ).group_snapshot.id;
    const attachment = (
      await ok(
        api.post('/attachments', {
          attachment: { volume_uuid: vol, instance_uuid: '5ec0e7a1-0000-4000-8000-000000000001' },
        }),
      )
    ).attachment.id;
    const spareAttachment = (
      await ok(
        api.post('/attachments', {
          attachment: { volume_uuid: attachVol, instance_uuid: '5ec0e7a1-0000-4000-8000-000000000002' },
        }),
      )
    ).attachment.id;
    const host = (await ok(api.get(`/volumes/${vol}`))).volume['os-vol-host-attr:host'] ?? 'x';

    Object.assign(pools, {
      project_id: [P],
      projectId: [P],
      types: [type, encType],
      'qos-specs': [qos],
      group_types: [groupType],
      volumes: [vol, transferVol],
      snapshots: [snap],
      backups: [backup],
      'volume-transfers': [transfer],
      'os-volume-transfer': [transfer],
      groups: [group],
      consistencygroups: [group],
      group_snapshots: [groupSnap],
      cgsnapshots: [groupSnap],
      attachments: [attachment],
      messages: [MISSING],
      extensions: ['os-types-manage', 'os-extended-snapshot-attributes'],
      key: ['k', 'provider'],
      encryptionId: [MISSING],
      action: ['enable', 'disable', 'freeze', 'thaw', 'set-log', 'get-log'],
      host: [String(host).split('#')[0] ?? 'x', 'x'],
      className: ['default'],
      alias: ['os-types-manage'],
    });
    Object.assign(spares, {
      ...pools,
      types: [spareType],
      'qos-specs': [spareQos],
      group_types: [spareGroupType],
      volumes: [spareVol],
      snapshots: [spareSnap],
      // one backup (they are slow to make): DELETE gets the id of none
      backups: [MISSING],
      attachments: [spareAttachment],
    });
  };

  /** Well-formed bodies per logical route (`POST /volumes/:id/action`). */
  const bodies = (route: FuzzRoute): unknown[] => {
    const key = `${route.method} ${logical(route.url)}`;
    const v = pools['volumes']?.[0];
    const s = pools['snapshots']?.[0];
    const b = pools['backups']?.[0];
    const t = pools['types']?.[0];
    const g = pools['groups']?.[0];
    const gs = pools['group_snapshots']?.[0];
    const connector = {
      host: 'fz-host',
      initiator: 'iqn.1993-08.org.debian:01:fz',
      ip: '10.0.0.1',
      platform: 'x86_64',
      os_type: 'linux',
      multipath: false,
    };
    switch (key) {
      case 'POST /volumes':
        return [
          {
            volume: {
              size: 1,
              name: 'n',
              description: 'd',
              volume_type: t,
              metadata: { a: 'b' },
              availability_zone: 'nova',
              multiattach: false,
            },
          },
          { volume: { size: 1, source_volid: v } },
          { volume: { size: 1, snapshot_id: s } },
          { volume: { size: 1, backup_id: b } },
          {
            volume: { size: 1, group_id: g, volume_type: t },
            'OS-SCH-HNT:scheduler_hints': { same_host: [v] },
          },
        ];
      case 'PUT /volumes/:id':
        return [{ volume: { name: 'n', description: 'd', metadata: { a: 'b' } } }];
      case 'POST /volumes/:id/action':
        return [
          { 'os-extend': { new_size: 2 } },
          { 'os-reset_status': { status: 'available', attach_status: 'detached', migration_status: 'none' } },
          { 'os-set_bootable': { bootable: true } },
          { 'os-update_readonly_flag': { readonly: false } },
          { 'os-reserve': {} },
          { 'os-unreserve': {} },
          { 'os-begin_detaching': {} },
          { 'os-roll_detaching': {} },
          {
            'os-attach': {
              instance_uuid: '5ec0e7a1-0000-4000-8000-000000000003',
              mountpoint: '/dev/vdb',
              mode: 'rw',
            },
          },
          { 'os-detach': { attachment_id: pools['attachments']?.[0] } },
          { 'os-initialize_connection': { connector } },
          { 'os-terminate_connection': { connector } },
          { 'os-force_detach': { attachment_id: pools['attachments']?.[0], connector } },
          { 'os-retype': { new_type: t, migration_policy: 'never' } },
          { 'os-migrate_volume': { host: 'x@lvm#pool', force_host_copy: false, lock_volume: false } },
          { 'os-force_delete': {} },
          { 'os-unmanage': {} },
          { revert: { snapshot_id: s } },
        ];
      case 'POST /volumes/:id/metadata':
      case 'PUT /volumes/:id/metadata':
      case 'POST /snapshots/:id/metadata':
      case 'PUT /snapshots/:id/metadata':
        return [{ metadata: { k: 'v', k2: 'v2' } }];
      case 'PUT /volumes/:id/metadata/:key':
      case 'PUT /snapshots/:id/metadata/:key':
        return [{ meta: { k: 'v3' } }];
      case 'POST /snapshots':
        return [
          { snapshot: { volume_id: v, name: 'n', description: 'd', force: true, metadata: { a: 'b' } } },
        ];
      case 'PUT /snapshots/:id':
        return [{ snapshot: { name: 'n', description: 'd' } }];
      case 'POST /snapshots/:id/action':
        return [
          { 'os-reset_status': { status: 'available' } },
          { 'os-update_snapshot_status': { status: 'available', progress: '100%' } },
          { 'os-force_delete': {} },
          { 'os-unmanage': {} },
        ];
      case 'POST /types':
        return [
          {
            volume_type: {
              name: 'fz-new-type',
              description: 'd',
              'os-volume-type-access:is_public': true,
              extra_specs: { a: 'b' },
            },
          },
        ];
      case 'PUT /types/:id':
        return [{ volume_type: { name: 'fz-renamed', description: 'd', is_public: true } }];
      case 'POST /types/:id/action':
        return [{ addProjectAccess: { project: P } }, { removeProjectAccess: { project: P } }];
      case 'POST /types/:id/extra_specs':
        return [{ extra_specs: { k: 'v', 'capabilities:x': '<is> True' } }];
      case 'PUT /types/:id/extra_specs/:key':
      case 'PUT /group_types/:id/group_specs/:key':
        return [{ k: 'v2' }];
      case 'POST /types/:id/encryption':
        return [
          {
            encryption: {
              provider: 'luks',
              control_location: 'front-end',
              cipher: 'aes-xts-plain64',
              key_size: 256,
            },
          },
        ];
      case 'PUT /types/:id/encryption/:encryptionId':
        return [{ encryption: { provider: 'luks', control_location: 'back-end', key_size: 512 } }];
      case 'PUT /default-types/:projectId':
        return [{ default_type: { volume_type: t } }];
      case 'PUT /os-quota-sets/:projectId':
        return [
          {
            quota_set: {
              volumes: 20,
              gigabytes: 100,
              snapshots: 10,
              backups: 10,
              backup_gigabytes: 100,
              per_volume_gigabytes: -1,
              groups: 10,
            },
          },
        ];
      case 'PUT /os-quota-class-sets/:className':
        return [{ quota_class_set: { volumes: 20, gigabytes: 100 } }];
      case 'POST /backups':
        return [
          {
            backup: {
              volume_id: v,
              name: 'n',
              description: 'd',
              incremental: false,
              force: true,
              snapshot_id: s,
              metadata: { a: 'b' },
              availability_zone: 'nova',
            },
          },
        ];
      case 'POST /backups/import_record':
        return [
          {
            backup_record: {
              backup_service: 'cinder.backup.drivers.posix.PosixBackupDriver',
              backup_url: 'eyJhIjogMX0=',
            },
          },
        ];
      case 'PUT /backups/:id':
        return [{ backup: { name: 'n', description: 'd', metadata: { a: 'b' } } }];
      case 'POST /backups/:id/restore':
        return [{ restore: { volume_id: v, name: 'n' } }, { restore: {} }];
      case 'POST /backups/:id/action':
        return [{ 'os-reset_status': { status: 'available' } }, { 'os-force_delete': {} }];
      case 'POST /qos-specs':
        return [{ qos_specs: { name: 'fz-new-qos', consumer: 'both', read_iops_sec: '1000' } }];
      case 'PUT /qos-specs/:id':
        return [{ qos_specs: { read_iops_sec: '2000' } }];
      case 'PUT /qos-specs/:id/delete_keys':
        return [{ keys: ['read_iops_sec', 'k'] }];
      case 'POST /os-volume-transfer':
      case 'POST /volume-transfers':
        return [{ transfer: { volume_id: v, name: 'n', no_snapshots: true } }];
      case 'POST /os-volume-transfer/:id/accept':
      case 'POST /volume-transfers/:id/accept':
        return [{ accept: { auth_key: '0123456789abcdef' } }];
      case 'POST /group_types':
        return [
          { group_type: { name: 'fz-new-gt', description: 'd', is_public: true, group_specs: { a: 'b' } } },
        ];
      case 'PUT /group_types/:id':
        return [{ group_type: { name: 'fz-renamed-gt', description: 'd' } }];
      case 'POST /group_types/:id/group_specs':
        return [{ group_specs: { k: 'v' } }];
      case 'POST /groups':
        return [
          {
            group: {
              group_type: pools['group_types']?.[0],
              volume_types: [t],
              name: 'n',
              description: 'd',
              availability_zone: 'nova',
            },
          },
        ];
      case 'POST /groups/action':
        return [
          { 'create-from-src': { source_group_id: g, name: 'n' } },
          { 'create-from-src': { group_snapshot_id: gs } },
        ];
      case 'PUT /groups/:id':
        return [{ group: { name: 'n', description: 'd', add_volumes: v, remove_volumes: '' } }];
      case 'POST /groups/:id/action':
        return [
          { delete: { 'delete-volumes': false } },
          { reset_status: { status: 'available' } },
          { enable_replication: {} },
          { failover_replication: {} },
          { list_replication_targets: {} },
        ];
      case 'POST /group_snapshots':
        return [{ group_snapshot: { group_id: g, name: 'n', description: 'd' } }];
      case 'POST /group_snapshots/:id/action':
        return [{ reset_status: { status: 'available' } }];
      case 'POST /consistencygroups':
        return [{ consistencygroup: { volume_types: t, name: 'n' } }];
      case 'POST /consistencygroups/create_from_src':
        return [{ 'consistencygroup-from-src': { source_cgid: g, name: 'n' } }];
      case 'PUT /consistencygroups/:id':
      case 'PUT /consistencygroups/:id/update':
        return [{ consistencygroup: { name: 'n', description: 'd', add_volumes: '', remove_volumes: '' } }];
      case 'POST /consistencygroups/:id/delete':
        return [{ consistencygroup: { force: false } }];
      case 'POST /cgsnapshots':
        return [{ cgsnapshot: { consistencygroup_id: g, name: 'n' } }];
      case 'PUT /os-services/:action':
        return [{ host: 'x@lvm', binary: 'cinder-volume', disabled_reason: 'r', level: 'debug' }];
      case 'POST /manageable_volumes':
      case 'POST /os-volume-manage':
        return [
          {
            volume: {
              host: 'x@lvm#pool',
              ref: { 'source-name': 'vol-x' },
              name: 'n',
              volume_type: t,
              bootable: false,
            },
          },
        ];
      case 'POST /manageable_snapshots':
      case 'POST /os-snapshot-manage':
        return [{ snapshot: { volume_id: v, ref: { 'source-name': 'snap-x' }, name: 'n' } }];
      case 'POST /attachments':
        return [
          {
            attachment: {
              volume_uuid: v,
              instance_uuid: '5ec0e7a1-0000-4000-8000-000000000009',
              connector,
              mode: 'rw',
            },
          },
        ];
      case 'PUT /attachments/:id':
        return [{ attachment: { connector } }];
      case 'POST /attachments/:id/action':
        return [{ 'os-complete': {} }];
      default:
        return [{}];
    }
  };

  /** `/v3/:project_id/volumes/:id` → `/volumes/:id`. */
  const logical = (url: string): string => url.replace(/^\/v[23](\/:project_id)?/, '') || '/';

  const target = (): FuzzTarget => ({
    routes: bs.routes.map((r) => {
      const versioned = /^\/v[23]\/:project_id\//.test(r.url) && r.url.startsWith('/v3');
      return { ...r, weight: (versioned ? 1 : 0.25) * (r.method === 'DELETE' ? 0.5 : 1) };
    }),
    param: (name, before, route) => {
      const kind = name === 'id' ? before : name;
      return (route.method === 'DELETE' ? spares[kind] : pools[kind]) ?? [];
    },
    bodies,
    queryKeys: QUERY_KEYS,
    queryValue: (key: string, rng: Rng) =>
      rng.pick(SANE_VALUES[key] ?? pools[`${key.replace(/_id$/, '')}s`] ?? ['x', '1', 'fz-vol']),
    headers: (rng) => ({
      'x-auth-token': rng.pick([TOKENS.admin, TOKENS.admin, TOKENS.member, TOKENS.reader, TOKENS.other]),
      accept: 'application/json',
      'openstack-api-version': `volume ${rng.pick(VERSIONS)}`,
    }),
    oddHeaders: (rng): Record<string, string | null> => {
      switch (rng.int(0, 4)) {
        case 0:
        case 1: {
          const value = rng.pick([
            'volume 3.72',
            'volume 4.0',
            'volume 2.0',
            'volume 3.',
            'volume .1',
            'volume 03.010',
            'volume 3.1.1',
            'volume -3.1',
            'volume 3.99999999999999999999',
            'volume',
            'volume ',
            'compute 2.1',
            'volume 3.0, volume 3.71',
            'volume LATEST',
            'volume latest, compute 2.1',
            '',
            'x'.repeat(rng.pick([100, 5000])),
          ]);
          return rng.chance(0.2)
            ? { 'openstack-api-version': null, 'x-openstack-volume-api-version': value }
            : { 'openstack-api-version': value };
        }
        case 2:
          // identity headers a caller cannot set past its token (keystonemiddleware replaces them)
          return {
            [rng.pick([
              'x-project-id',
              'x-tenant-id',
              'x-user-id',
              'x-roles',
              'x-identity-status',
              'x-service-token',
            ])]: rng.pick([
              '',
              ' ',
              'admin',
              'ADMIN',
              'admin ,',
              ',',
              'Confirmed',
              'other',
              'é',
              'x'.repeat(3000),
              MISSING,
            ]),
          };
        case 3: {
          // a token Keystone does not know, an empty or huge one, none at all
          const token = rng.pick([
            '',
            ' ',
            'a:b',
            ':',
            'unknown-token',
            `${TOKENS.admin} `,
            'x'.repeat(4000),
            `gAAAAA${'A'.repeat(180)}`,
            'é',
          ]);
          return { 'x-auth-token': rng.chance(0.15) ? null : token };
        }
        default:
          return {
            'x-openstack-request-id': rng.pick(['req-x', '', 'é'.repeat(10)]),
            'x-compute-request-id': 'x',
          };
      }
    },
    contentType: 'application/json',
    bodyLimit: BODY_LIMIT,
  });

  /** A finding in one answer: a 5xx, or a 4xx that is not a Cinder fault. */
  const check = (_req: FuzzRequest, answer: FuzzAnswer): string | null => {
    if (answer.status >= 500 || answer.status < 200)
      return `status ${answer.status}: ${answer.text.slice(0, 300)}`;
    if (answer.status < 400) return null;
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch {
      return `not JSON: ${answer.text.slice(0, 300)}`;
    }
    if (answer.status === 401 && JSON.stringify(body) === JSON.stringify(KEYSTONE_401)) return null;
    const keys = body && typeof body === 'object' ? Object.keys(body) : [];
    const fault = (body as Record<string, { code?: unknown; message?: unknown }>)[keys[0] ?? ''];
    if (
      keys.length !== 1 ||
      !FAULTS.has(keys[0] ?? '') ||
      fault?.code !== answer.status ||
      typeof fault?.message !== 'string'
    ) {
      return `not a Cinder fault: ${answer.text.slice(0, 300)}`;
    }
    return null;
  };

  beforeAll(async () => {
    const started = Date.now();
    await keystone.start();
    keystone.addToken(TOKENS.admin, { user: 'fuzz-admin', project: P, roles: ['admin', 'member', 'reader'] });
    keystone.addToken(TOKENS.member, { user: 'fuzzer', project: P, roles: ['member', 'reader'] });
    keystone.addToken(TOKENS.reader, { user: 'fuzz-reader', project: P, roles: ['reader'] });
    keystone.addToken(TOKENS.other, {
      user: 'fuzz-other',
      project: 'b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0',
      roles: ['member', 'reader'],
    });
    bs = await startBlockStorage(mode, {
      VOLUME_API_BODY_LIMIT: String(BODY_LIMIT),
      AUTH_MODE: 'keystone',
      KEYSTONE_AUTH_URL: keystone.url,
      KEYSTONE_USERNAME: 'cinder',
      KEYSTONE_PASSWORD: keystone.servicePassword,
    });
    api = new TokenClient(bs.base, admin);
    await seedResources();
    process.stdout.write(
      `volume-api fuzz (${mode}): started and seeded in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
  }, 300_000);
  afterAll(async () => {
    await bs?.close();
    await keystone.stop();
  });

  it('answers 10,000 generated requests over every route with a clean 2xx-4xx, never a 5xx or a reset', async () => {
    const plan = fuzzPlan(process.env, 20100921, COUNT);
    process.stdout.write(
      `volume-api fuzz (${mode}): seed ${plan.seed}, ${plan.cases.length} cases (FUZZ_SEED, FUZZ_CASES, FUZZ_COUNT to change)\n`,
    );
    const t = target();
    const report = await runFuzz({
      baseUrl: bs.base,
      seed: plan.seed,
      cases: plan.cases,
      concurrency: CONCURRENCY,
      generate: routeCases(t),
      check,
    });
    process.stdout.write(
      `volume-api fuzz (${mode}): ${report.sent} requests in ${(report.elapsedMs / 1000).toFixed(1)} s, statuses ${JSON.stringify(report.statuses)}, ` +
        `focus ${JSON.stringify(Object.fromEntries(report.perFocus))}\n`,
    );
    expect(report.findings.slice(0, 20)).toEqual([]);
    if (plan.replay) return;
    expect(report.sent).toBeGreaterThanOrEqual(process.env['FUZZ_COUNT'] ? COUNT : 10_000);
    // every route was aimed at: the project-scoped v3 routes with a fair share each, the others at least once
    const routes = t.routes.map((r) => ({
      key: `${r.method} ${r.url}`,
      share: Math.floor((COUNT / t.routes.length / 4) * (r.weight ?? 1)),
    }));
    expect(
      routes.filter((r) => (report.perRoute.get(r.key) ?? 0) < Math.max(1, r.share)).map((r) => r.key),
    ).toEqual([]);
  }, 900_000);
});
