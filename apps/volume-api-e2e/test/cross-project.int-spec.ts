import {
  admin,
  Client,
  type Caller,
  MODES,
  type Reply,
  startBlockStorage,
  type BlockStorage,
} from './harness';

/**
 * Cross-project safety (issue #15 item 4): every registered route of the Cinder API (v3 with and
 * without the project segment, v2) is walked with project B's credentials against project A's
 * resources. B gets Cinder's answer for another project's id (404 itemNotFound, or 403 from policy
 * for the admin API) and never A's data; A's resources are the same afterwards. The walk is keyed
 * by the app's route table: a route without an entry fails the suite.
 */
const SECRET = 'a-secret-5d1c0b';
const PROJECT_A = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const PROJECT_B = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
const A: Caller = { project: PROJECT_A, user: 'alice', roles: 'member,reader' };
const B: Caller = { project: PROJECT_B, user: 'bob', roles: 'member,reader' };

interface Ids {
  volume: string;
  transferVolume: string;
  snapshot: string;
  backup: string;
  transfer: string;
  privateType: string;
  groupType: string;
  group: string;
  groupSnapshot: string;
  qos: string;
  attachment: string;
  backupPolicy: string;
}

/** One request B makes (path after `/v3/{project}`) and the status Cinder answers. */
interface Probe {
  method: string;
  path: string;
  body?: unknown;
  status: number;
  /** The status on `/v2/{project}` when it differs (v2 is microversion 3.0). */
  v2?: number;
  /** The fault key of the error body (default: from the status). */
  fault?: string;
}

const FAULT: Record<number, string> = {
  400: 'badRequest',
  403: 'forbidden',
  404: 'itemNotFound',
  409: 'conflictingRequest',
  413: 'overLimit',
};

describe.each(MODES)('cross-project safety of the block-storage API (%s)', (mode) => {
  let bs: BlockStorage;
  let root: Client;
  let alice: Client;
  let bob: Client;
  const ids = {} as Ids;

  const poll = async (c: Client, path: string, key: string, statuses: string[]): Promise<any> => {
    for (;;) {
      const r = await c.get(path);
      const s = r.body?.[key]?.status;
      if (statuses.includes(s)) return r.body[key];
      if (r.status >= 400 || s === 'error') throw new Error(`${path}: ${r.status} ${r.text.slice(0, 300)}`);
      await new Promise((res) => setImmediate(res));
    }
  };
  const ok = async (p: Promise<Reply>): Promise<any> => {
    const r = await p;
    if (r.status >= 300) throw new Error(`${r.status} ${r.text.slice(0, 300)}`);
    return r.body;
  };

  /** What A sees of its own resources: the walk must leave it as it was. */
  const snapshotOfA = async (): Promise<unknown> => {
    const out: Record<string, unknown> = {};
    for (const p of [
      `/volumes/${ids.volume}`,
      `/volumes/${ids.transferVolume}`,
      `/volumes/${ids.volume}/metadata`,
      `/snapshots/${ids.snapshot}`,
      `/snapshots/${ids.snapshot}/metadata`,
      `/backups/${ids.backup}`,
      `/os-backup-policies/${ids.backupPolicy}`,
      '/os-backup-policies',
      `/volume-transfers/${ids.transfer}`,
      `/groups/${ids.group}`,
      `/group_snapshots/${ids.groupSnapshot}`,
      `/types/${ids.privateType}`,
      `/attachments/${ids.attachment}`,
      '/attachments/detail',
      '/volumes/detail',
      '/snapshots/detail',
      '/backups/detail',
      `/os-quota-sets/${PROJECT_A}?usage=true`,
    ]) {
      out[p] = await ok(alice.get(p));
    }
    return out;
  };

  beforeAll(async () => {
    bs = await startBlockStorage(mode);
    root = new Client(bs.base, admin);
    alice = root.as(A);
    bob = root.as(B);
    // Admin-made: a private type A may use, a group type, a QoS spec.
    ids.privateType = (
      await ok(
        root.post('/types', {
          volume_type: {
            name: `iso-private-${mode}`,
            description: SECRET,
            'os-volume-type-access:is_public': false,
          },
        }),
      )
    ).volume_type.id;
    await ok(root.post(`/types/${ids.privateType}/action`, { addProjectAccess: { project: PROJECT_A } }));
    ids.groupType = (
      await ok(root.post('/group_types', { group_type: { name: `iso-gt-${mode}`, is_public: true } }))
    ).group_type.id;
    ids.qos = (
      await ok(root.post('/qos-specs', { qos_specs: { name: `iso-qos-${mode}`, consumer: 'back-end' } }))
    ).qos_specs.id;

    ids.volume = (
      await ok(
        alice.post('/volumes', {
          volume: {
            size: 1,
            name: `vol-${SECRET}`,
            description: SECRET,
            metadata: { secret: SECRET },
            volume_type: ids.privateType,
          },
        }),
      )
    ).volume.id;
    ids.transferVolume = (
      await ok(alice.post('/volumes', { volume: { size: 1, name: 'to-transfer' } }))
    ).volume.id;
    await poll(alice, `/volumes/${ids.volume}`, 'volume', ['available']);
    await poll(alice, `/volumes/${ids.transferVolume}`, 'volume', ['available']);
    ids.snapshot = (
      await ok(
        alice.post('/snapshots', {
          snapshot: { volume_id: ids.volume, name: `snap-${SECRET}`, metadata: { secret: SECRET } },
        }),
      )
    ).snapshot.id;
    await poll(alice, `/snapshots/${ids.snapshot}`, 'snapshot', ['available']);
    ids.backup = (
      await ok(
        alice.post('/backups', {
          backup: { volume_id: ids.volume, name: `bak-${SECRET}`, description: SECRET },
        }),
      )
    ).backup.id;
    await poll(alice, `/backups/${ids.backup}`, 'backup', ['available']);
    await poll(alice, `/volumes/${ids.volume}`, 'volume', ['available']);
    // A backup policy of A's (ours): a yearly schedule, so it never fires during the walk.
    ids.backupPolicy = (
      await ok(
        alice.post('/os-backup-policies', {
          backup_policy: {
            volume_id: ids.volume,
            schedule: '@yearly',
            retention: 3,
            name: `bp-${SECRET}`,
            description: SECRET,
          },
        }),
      )
    ).backup_policy.id;
    ids.transfer = (
      await ok(
        alice.post('/volume-transfers', {
          transfer: { volume_id: ids.transferVolume, name: `tr-${SECRET}` },
        }),
      )
    ).transfer.id;
    ids.group = (
      await ok(
        alice.post('/groups', {
          group: { group_type: ids.groupType, volume_types: [ids.privateType], name: `grp-${SECRET}` },
        }),
      )
    ).group.id;
    await poll(alice, `/groups/${ids.group}`, 'group', ['available']);
    ids.groupSnapshot = (
      await ok(
        alice.post('/group_snapshots', { group_snapshot: { group_id: ids.group, name: `gs-${SECRET}` } }),
      )
    ).group_snapshot.id;
    await poll(alice, `/group_snapshots/${ids.groupSnapshot}`, 'group_snapshot', ['available']);
    ids.attachment = (
      await ok(
        alice.post('/attachments', {
          attachment: { volume_uuid: ids.volume, instance_uuid: '5ec0e7a1-0000-4000-8000-000000000001' },
        }),
      )
    ).attachment.id;
  }, 180_000);
  afterAll(async () => {
    await bs?.close();
  });

  /** The walk: logical route (after the API and project prefix) → B's probes. */
  const walk = (): Record<string, Probe[]> => {
    const v = ids.volume;
    const s = ids.snapshot;
    const b = ids.backup;
    const t = ids.transfer;
    const g = ids.group;
    const gs = ids.groupSnapshot;
    const missing = '0f0f0f0f-0f0f-4f0f-8f0f-0f0f0f0f0f0f';
    const list = (path: string): Probe => ({ method: 'GET', path, status: 200 });
    const nf = (method: string, path: string, body?: unknown, extra: Partial<Probe> = {}): Probe => ({
      method,
      path,
      body,
      status: 404,
      ...extra,
    });
    const denied = (method: string, path: string, body?: unknown, extra: Partial<Probe> = {}): Probe => ({
      method,
      path,
      body,
      status: 403,
      ...extra,
    });
    return {
      'GET /extensions': [list('/extensions')],
      'GET /extensions/:alias': [{ method: 'GET', path: '/extensions/os-types-manage', status: 200 }],
      'GET /types': [list('/types'), list('/types?is_public=None')],
      'POST /types': [denied('POST', '/types', { volume_type: { name: 'b-type' } })],
      'GET /types/:id': [nf('GET', `/types/${ids.privateType}`)],
      'PUT /types/:id': [denied('PUT', `/types/${ids.privateType}`, { volume_type: { description: 'b' } })],
      'DELETE /types/:id': [denied('DELETE', `/types/${ids.privateType}`)],
      'POST /types/:id/action': [
        denied('POST', `/types/${ids.privateType}/action`, { addProjectAccess: { project: PROJECT_B } }),
      ],
      'GET /types/:id/os-volume-type-access': [
        denied('GET', `/types/${ids.privateType}/os-volume-type-access`),
      ],
      'GET /types/:id/extra_specs': [nf('GET', `/types/${ids.privateType}/extra_specs`)],
      'POST /types/:id/extra_specs': [
        denied('POST', `/types/${ids.privateType}/extra_specs`, { extra_specs: { k: 'v' } }),
      ],
      'GET /types/:id/extra_specs/:key': [nf('GET', `/types/${ids.privateType}/extra_specs/k`)],
      'PUT /types/:id/extra_specs/:key': [
        denied('PUT', `/types/${ids.privateType}/extra_specs/k`, { k: 'v' }),
      ],
      'DELETE /types/:id/extra_specs/:key': [denied('DELETE', `/types/${ids.privateType}/extra_specs/k`)],
      'GET /types/:id/encryption': [denied('GET', `/types/${ids.privateType}/encryption`)],
      'POST /types/:id/encryption': [
        denied('POST', `/types/${ids.privateType}/encryption`, {
          encryption: { provider: 'luks', control_location: 'front-end' },
        }),
      ],
      'GET /types/:id/encryption/:key': [denied('GET', `/types/${ids.privateType}/encryption/provider`)],
      'PUT /types/:id/encryption/:encryptionId': [
        denied('PUT', `/types/${ids.privateType}/encryption/${missing}`, {
          encryption: { provider: 'luks' },
        }),
      ],
      'DELETE /types/:id/encryption/:encryptionId': [
        denied('DELETE', `/types/${ids.privateType}/encryption/${missing}`),
      ],
      'GET /default-types': [denied('GET', '/default-types')],
      'PUT /default-types/:projectId': [
        denied('PUT', `/default-types/${PROJECT_A}`, { default_type: { volume_type: ids.privateType } }),
      ],
      'GET /default-types/:projectId': [denied('GET', `/default-types/${PROJECT_A}`)],
      'DELETE /default-types/:projectId': [denied('DELETE', `/default-types/${PROJECT_A}`)],

      'GET /volumes': [
        list('/volumes'),
        list(`/volumes?name=vol-${SECRET}`),
        { method: 'GET', path: '/volumes?all_tenants=1', status: 200 },
        { method: 'GET', path: `/volumes?project_id=${PROJECT_A}&all_tenants=1`, status: 400, v2: 200 },
        nf('GET', `/volumes?marker=${v}`),
      ],
      'GET /volumes/detail': [
        list('/volumes/detail'),
        list(
          `/volumes/detail?all_tenants=true&metadata=${encodeURIComponent(JSON.stringify({ secret: SECRET }))}`,
        ),
      ],
      'GET /volumes/summary': [
        { method: 'GET', path: '/volumes/summary?all_tenants=1', status: 200, v2: 404 },
      ],
      'POST /volumes': [
        nf('POST', '/volumes', { volume: { size: 1, source_volid: v } }),
        nf('POST', '/volumes', { volume: { size: 1, snapshot_id: s } }),
        nf('POST', '/volumes', { volume: { size: 1, backup_id: b } }, { v2: 202 }),
        nf('POST', '/volumes', { volume: { size: 1, volume_type: ids.privateType } }),
      ],
      'GET /volumes/:id': [nf('GET', `/volumes/${v}`)],
      'PUT /volumes/:id': [nf('PUT', `/volumes/${v}`, { volume: { name: 'mine' } })],
      'DELETE /volumes/:id': [nf('DELETE', `/volumes/${v}?cascade=true`)],
      'POST /volumes/:id/action': [
        nf('POST', `/volumes/${v}/action`, { 'os-extend': { new_size: 2 } }),
        nf('POST', `/volumes/${v}/action`, { 'os-set_bootable': { bootable: true } }),
        nf('POST', `/volumes/${v}/action`, { 'os-reset_status': { status: 'error' } }),
        nf('POST', `/volumes/${v}/action`, { 'os-force_delete': {} }),
        nf('POST', `/volumes/${v}/action`, { 'os-retype': { new_type: ids.privateType } }),
      ],
      'GET /volumes/:id/metadata': [nf('GET', `/volumes/${v}/metadata`)],
      'POST /volumes/:id/metadata': [nf('POST', `/volumes/${v}/metadata`, { metadata: { b: 'b' } })],
      'PUT /volumes/:id/metadata': [nf('PUT', `/volumes/${v}/metadata`, { metadata: { b: 'b' } })],
      'GET /volumes/:id/metadata/:key': [nf('GET', `/volumes/${v}/metadata/secret`)],
      'PUT /volumes/:id/metadata/:key': [
        nf('PUT', `/volumes/${v}/metadata/secret`, { meta: { secret: 'b' } }),
      ],
      'DELETE /volumes/:id/metadata/:key': [nf('DELETE', `/volumes/${v}/metadata/secret`)],

      'GET /snapshots': [list('/snapshots'), list('/snapshots?all_tenants=1')],
      'GET /snapshots/detail': [list('/snapshots/detail')],
      'POST /snapshots': [nf('POST', '/snapshots', { snapshot: { volume_id: v, force: true } })],
      'GET /snapshots/:id': [nf('GET', `/snapshots/${s}`)],
      'PUT /snapshots/:id': [nf('PUT', `/snapshots/${s}`, { snapshot: { name: 'mine' } })],
      'DELETE /snapshots/:id': [nf('DELETE', `/snapshots/${s}`)],
      'POST /snapshots/:id/action': [
        nf('POST', `/snapshots/${s}/action`, { 'os-reset_status': { status: 'error' } }),
      ],
      'GET /snapshots/:id/metadata': [nf('GET', `/snapshots/${s}/metadata`)],
      'POST /snapshots/:id/metadata': [nf('POST', `/snapshots/${s}/metadata`, { metadata: { b: 'b' } })],
      'PUT /snapshots/:id/metadata': [nf('PUT', `/snapshots/${s}/metadata`, { metadata: { b: 'b' } })],
      'GET /snapshots/:id/metadata/:key': [nf('GET', `/snapshots/${s}/metadata/secret`)],
      'PUT /snapshots/:id/metadata/:key': [
        nf('PUT', `/snapshots/${s}/metadata/secret`, { meta: { secret: 'b' } }),
      ],
      'DELETE /snapshots/:id/metadata/:key': [nf('DELETE', `/snapshots/${s}/metadata/secret`)],

      'GET /os-quota-sets/:projectId': [denied('GET', `/os-quota-sets/${PROJECT_A}?usage=true`)],
      'GET /os-quota-sets/:projectId/defaults': [
        { method: 'GET', path: `/os-quota-sets/${PROJECT_A}/defaults`, status: 200 },
      ],
      'PUT /os-quota-sets/:projectId': [
        denied('PUT', `/os-quota-sets/${PROJECT_A}`, { quota_set: { volumes: 0 } }),
      ],
      'DELETE /os-quota-sets/:projectId': [denied('DELETE', `/os-quota-sets/${PROJECT_A}`)],
      'GET /limits': [list('/limits')],
      'GET /scheduler-stats/get_pools': [denied('GET', '/scheduler-stats/get_pools')],
      'GET /os-availability-zone': [list('/os-availability-zone')],

      'GET /backups': [list('/backups'), list('/backups?all_tenants=1')],
      'GET /backups/detail': [list('/backups/detail')],
      'POST /backups': [
        nf('POST', '/backups', { backup: { volume_id: v } }),
        nf('POST', '/backups', { backup: { volume_id: ids.transferVolume, snapshot_id: s } }),
      ],
      'POST /backups/import_record': [
        denied('POST', '/backups/import_record', {
          backup_record: { backup_service: 'x', backup_url: 'eA==' },
        }),
      ],
      'GET /os-backup-policies': [list('/os-backup-policies'), list('/os-backup-policies?all_tenants=1')],
      'POST /os-backup-policies': [
        nf('POST', '/os-backup-policies', {
          backup_policy: { volume_id: v, schedule: '@daily', retention: 2 },
        }),
      ],
      'GET /os-backup-policies/:id': [nf('GET', `/os-backup-policies/${ids.backupPolicy}`)],
      'PUT /os-backup-policies/:id': [
        nf('PUT', `/os-backup-policies/${ids.backupPolicy}`, { backup_policy: { retention: 1 } }),
      ],
      'DELETE /os-backup-policies/:id': [nf('DELETE', `/os-backup-policies/${ids.backupPolicy}`)],
      'GET /backups/:id': [nf('GET', `/backups/${b}`)],
      'PUT /backups/:id': [nf('PUT', `/backups/${b}`, { backup: { name: 'mine' } }, { v2: 404 })],
      'DELETE /backups/:id': [nf('DELETE', `/backups/${b}`)],
      'POST /backups/:id/restore': [nf('POST', `/backups/${b}/restore`, { restore: {} })],
      'GET /backups/:id/export_record': [nf('GET', `/backups/${b}/export_record`)],
      'POST /backups/:id/action': [
        nf('POST', `/backups/${b}/action`, { 'os-reset_status': { status: 'error' } }),
      ],

      'GET /qos-specs': [denied('GET', '/qos-specs')],
      'POST /qos-specs': [denied('POST', '/qos-specs', { qos_specs: { name: 'b' } })],
      'GET /qos-specs/:id': [denied('GET', `/qos-specs/${ids.qos}`)],
      'PUT /qos-specs/:id': [denied('PUT', `/qos-specs/${ids.qos}`, { qos_specs: { k: 'v' } })],
      'DELETE /qos-specs/:id': [denied('DELETE', `/qos-specs/${ids.qos}`)],
      'PUT /qos-specs/:id/delete_keys': [denied('PUT', `/qos-specs/${ids.qos}/delete_keys`, { keys: ['k'] })],
      'GET /qos-specs/:id/associations': [denied('GET', `/qos-specs/${ids.qos}/associations`)],
      'GET /qos-specs/:id/associate': [
        denied('GET', `/qos-specs/${ids.qos}/associate?vol_type_id=${ids.privateType}`),
      ],
      'GET /qos-specs/:id/disassociate': [
        denied('GET', `/qos-specs/${ids.qos}/disassociate?vol_type_id=${ids.privateType}`),
      ],
      'GET /qos-specs/:id/disassociate_all': [denied('GET', `/qos-specs/${ids.qos}/disassociate_all`)],

      'GET /attachments': [
        list('/attachments'),
        list('/attachments?all_tenants=1'),
        nf('GET', `/attachments?marker=${ids.attachment}`),
      ],
      'GET /attachments/detail': [list('/attachments/detail'), list(`/attachments/detail?volume_id=${v}`)],
      'POST /attachments': [nf('POST', '/attachments', { attachment: { volume_uuid: v } })],
      'GET /attachments/:id': [nf('GET', `/attachments/${ids.attachment}`)],
      'PUT /attachments/:id': [
        nf('PUT', `/attachments/${ids.attachment}`, { attachment: { connector: { host: 'b-host' } } }),
      ],
      'DELETE /attachments/:id': [nf('DELETE', `/attachments/${ids.attachment}`)],
      'POST /attachments/:id/action': [
        nf('POST', `/attachments/${ids.attachment}/action`, { 'os-complete': {} }),
      ],

      'GET /os-volume-transfer': [list('/os-volume-transfer')],
      'GET /os-volume-transfer/detail': [list('/os-volume-transfer/detail')],
      'POST /os-volume-transfer': [nf('POST', '/os-volume-transfer', { transfer: { volume_id: v } })],
      'GET /os-volume-transfer/:id': [nf('GET', `/os-volume-transfer/${t}`)],
      'DELETE /os-volume-transfer/:id': [nf('DELETE', `/os-volume-transfer/${t}`)],
      // Accepting needs the auth key: a wrong one is a 400 and moves nothing.
      'POST /os-volume-transfer/:id/accept': [
        {
          method: 'POST',
          path: `/os-volume-transfer/${t}/accept`,
          body: { accept: { auth_key: '0000000000000000' } },
          status: 400,
        },
      ],
      'GET /volume-transfers': [list('/volume-transfers'), list('/volume-transfers?all_tenants=1')],
      'GET /volume-transfers/detail': [list('/volume-transfers/detail')],
      'POST /volume-transfers': [nf('POST', '/volume-transfers', { transfer: { volume_id: v } })],
      'GET /volume-transfers/:id': [nf('GET', `/volume-transfers/${t}`)],
      'DELETE /volume-transfers/:id': [nf('DELETE', `/volume-transfers/${t}`)],
      'POST /volume-transfers/:id/accept': [
        {
          method: 'POST',
          path: `/volume-transfers/${t}/accept`,
          body: { accept: { auth_key: '0000000000000000' } },
          status: 400,
        },
      ],

      'GET /group_types': [list('/group_types')],
      'POST /group_types': [denied('POST', '/group_types', { group_type: { name: 'b' } })],
      'GET /group_types/:id': [{ method: 'GET', path: `/group_types/${ids.groupType}`, status: 200 }],
      'PUT /group_types/:id': [
        denied('PUT', `/group_types/${ids.groupType}`, { group_type: { description: 'b' } }),
      ],
      'DELETE /group_types/:id': [denied('DELETE', `/group_types/${ids.groupType}`)],
      'GET /group_types/:id/group_specs': [denied('GET', `/group_types/${ids.groupType}/group_specs`)],
      'POST /group_types/:id/group_specs': [
        denied('POST', `/group_types/${ids.groupType}/group_specs`, { group_specs: { k: 'v' } }),
      ],
      'GET /group_types/:id/group_specs/:key': [denied('GET', `/group_types/${ids.groupType}/group_specs/k`)],
      'PUT /group_types/:id/group_specs/:key': [
        denied('PUT', `/group_types/${ids.groupType}/group_specs/k`, { k: 'v' }),
      ],
      'DELETE /group_types/:id/group_specs/:key': [
        denied('DELETE', `/group_types/${ids.groupType}/group_specs/k`),
      ],
      'GET /groups': [list('/groups'), list('/groups?all_tenants=1')],
      'GET /groups/detail': [list('/groups/detail')],
      'POST /groups': [
        nf('POST', '/groups', { group: { group_type: ids.groupType, volume_types: [ids.privateType] } }),
      ],
      'POST /groups/action': [
        nf('POST', '/groups/action', { 'create-from-src': { source_group_id: g } }),
        nf('POST', '/groups/action', { 'create-from-src': { group_snapshot_id: gs } }),
      ],
      'GET /groups/:id': [nf('GET', `/groups/${g}`)],
      'PUT /groups/:id': [nf('PUT', `/groups/${g}`, { group: { name: 'mine' } })],
      'POST /groups/:id/action': [
        nf('POST', `/groups/${g}/action`, { delete: { 'delete-volumes': true } }),
        nf('POST', `/groups/${g}/action`, { reset_status: { status: 'error' } }),
      ],
      'GET /group_snapshots': [list('/group_snapshots'), list('/group_snapshots?all_tenants=1')],
      'GET /group_snapshots/detail': [list('/group_snapshots/detail')],
      'POST /group_snapshots': [nf('POST', '/group_snapshots', { group_snapshot: { group_id: g } })],
      'GET /group_snapshots/:id': [nf('GET', `/group_snapshots/${gs}`)],
      'DELETE /group_snapshots/:id': [nf('DELETE', `/group_snapshots/${gs}`)],
      'POST /group_snapshots/:id/action': [
        nf('POST', `/group_snapshots/${gs}/action`, { reset_status: { status: 'error' } }),
      ],
      'GET /consistencygroups': [list('/consistencygroups')],
      'GET /consistencygroups/detail': [list('/consistencygroups/detail')],
      'POST /consistencygroups': [
        nf('POST', '/consistencygroups', { consistencygroup: { volume_types: ids.privateType } }),
      ],
      'POST /consistencygroups/create_from_src': [
        nf('POST', '/consistencygroups/create_from_src', { 'consistencygroup-from-src': { source_cgid: g } }),
      ],
      'GET /consistencygroups/:id': [nf('GET', `/consistencygroups/${g}`)],
      'PUT /consistencygroups/:id': [
        nf('PUT', `/consistencygroups/${g}`, { consistencygroup: { name: 'mine' } }),
      ],
      'PUT /consistencygroups/:id/update': [
        nf('PUT', `/consistencygroups/${g}/update`, { consistencygroup: { name: 'mine' } }),
      ],
      'POST /consistencygroups/:id/delete': [
        nf('POST', `/consistencygroups/${g}/delete`, { consistencygroup: { force: true } }),
      ],
      'GET /cgsnapshots': [list('/cgsnapshots')],
      'GET /cgsnapshots/detail': [list('/cgsnapshots/detail')],
      'POST /cgsnapshots': [nf('POST', '/cgsnapshots', { cgsnapshot: { consistencygroup_id: g } })],
      'GET /cgsnapshots/:id': [nf('GET', `/cgsnapshots/${gs}`)],
      'DELETE /cgsnapshots/:id': [nf('DELETE', `/cgsnapshots/${gs}`)],

      'GET /os-services': [denied('GET', '/os-services')],
      'PUT /os-services/:action': [
        denied('PUT', '/os-services/disable', { host: 'x', binary: 'cinder-volume' }),
      ],
      'GET /os-hosts': [denied('GET', '/os-hosts')],
      'GET /os-hosts/:host': [denied('GET', '/os-hosts/x')],
      'GET /capabilities/:host': [denied('GET', '/capabilities/x')],
      'GET /os-quota-class-sets/:className': [denied('GET', '/os-quota-class-sets/default')],
      'PUT /os-quota-class-sets/:className': [
        denied('PUT', '/os-quota-class-sets/default', { quota_class_set: { volumes: 0 } }),
      ],
      'GET /messages': [list('/messages')],
      'GET /messages/:id': [nf('GET', `/messages/${missing}`)],
      'DELETE /messages/:id': [nf('DELETE', `/messages/${missing}`)],
      'GET /manageable_volumes': [denied('GET', '/manageable_volumes?host=x')],
      'GET /manageable_volumes/detail': [denied('GET', '/manageable_volumes/detail?host=x')],
      'POST /manageable_volumes': [
        denied('POST', '/manageable_volumes', { volume: { host: 'x', ref: { 'source-name': 'y' } } }),
      ],
      'GET /os-volume-manage': [denied('GET', '/os-volume-manage?host=x')],
      'GET /os-volume-manage/detail': [denied('GET', '/os-volume-manage/detail?host=x')],
      'POST /os-volume-manage': [
        denied('POST', '/os-volume-manage', { volume: { host: 'x', ref: { 'source-name': 'y' } } }),
      ],
      'GET /manageable_snapshots': [denied('GET', '/manageable_snapshots?host=x')],
      'GET /manageable_snapshots/detail': [denied('GET', '/manageable_snapshots/detail?host=x')],
      'POST /manageable_snapshots': [
        denied('POST', '/manageable_snapshots', { snapshot: { volume_id: v, ref: { 'source-name': 'y' } } }),
      ],
      'GET /os-snapshot-manage': [denied('GET', '/os-snapshot-manage?host=x')],
      'GET /os-snapshot-manage/detail': [denied('GET', '/os-snapshot-manage/detail?host=x')],
      'POST /os-snapshot-manage': [
        denied('POST', '/os-snapshot-manage', { snapshot: { volume_id: v, ref: { 'source-name': 'y' } } }),
      ],
    };
  };

  // Cinder looks the resource up before it asks policy (admin_actions `_get`, backup export_record):
  // another project's id is a 404 on the admin actions too, and non-admins may not filter on
  // project_id (`Invalid filters project_id`, 400; all_tenants is dropped for them).

  /** Routes outside any project: version documents and health. */
  const UNSCOPED = new Set([
    'GET /',
    'GET /v2',
    'GET /v3',
    'GET /v2/:project_id',
    'GET /v3/:project_id',
    'GET /healthz',
    'GET /readyz',
    'GET /metrics',
  ]);

  /** `/v3/:project_id/volumes/:id` → prefix `/v3/<B>` and logical key `GET /volumes/:id`. */
  const split = (method: string, url: string): { prefix: string; key: string; v2: boolean } | null => {
    const m = /^\/(v[23])(\/:project_id)?(\/.*)$/.exec(url);
    if (!m) return null;
    return { prefix: `/${m[1]}${m[2] ? `/${PROJECT_B}` : ''}`, key: `${method} ${m[3]}`, v2: m[1] === 'v2' };
  };

  it('walks every registered route as project B and never reaches project A', async () => {
    const before = await snapshotOfA();
    const table = walk();
    const routes = bs.routes.map((r) => ({ method: r.method, url: r.url.replace(/\/$/, '') || '/' }));
    expect(routes.length).toBeGreaterThan(300);
    const uncovered = routes.filter(
      (r) => !UNSCOPED.has(`${r.method} ${r.url}`) && !((split(r.method, r.url)?.key ?? '') in table),
    );
    expect(uncovered.map((r) => `${r.method} ${r.url}`)).toEqual([]);
    const keys = new Set(routes.map((r) => split(r.method, r.url)?.key));
    expect(Object.keys(table).filter((k) => !keys.has(k))).toEqual([]);

    const secretIds = [
      ids.volume,
      ids.transferVolume,
      ids.snapshot,
      ids.backup,
      ids.transfer,
      ids.group,
      ids.groupSnapshot,
      ids.attachment,
    ];
    const failures: string[] = [];
    for (const r of routes) {
      if (UNSCOPED.has(`${r.method} ${r.url}`)) {
        const res = await bob.raw(r.method, `${bs.base}${r.url.replace(':project_id', PROJECT_B)}`);
        if (res.status >= 400 || res.text.includes(SECRET))
          failures.push(`${r.method} ${r.url} → ${res.status}`);
        continue;
      }
      const sp = split(r.method, r.url)!;
      for (const probe of table[sp.key] ?? []) {
        const url = `${bs.base}${sp.prefix}${probe.path}`;
        const res = await bob.raw(probe.method, url, probe.body);
        const expected = sp.v2 && probe.v2 !== undefined ? probe.v2 : probe.status;
        const where = `${r.method} ${r.url}: ${probe.method} ${sp.prefix}${probe.path}`;
        if (res.status !== expected)
          failures.push(`${where} → ${res.status} (expected ${expected}) ${res.text.slice(0, 200)}`);
        else if (expected >= 400) {
          const fault = probe.fault ?? FAULT[expected] ?? `status ${expected}`;
          if (!res.body?.[fault] || res.body[fault].code !== expected)
            failures.push(`${where} → body ${res.text.slice(0, 200)} (expected ${fault})`);
        }
        if (res.text.includes(SECRET)) failures.push(`${where} → shows A's data: ${res.text.slice(0, 200)}`);
        const echoed = `${probe.path} ${JSON.stringify(probe.body ?? '')}`;
        const leaked = secretIds.filter((id) => res.text.includes(id) && !echoed.includes(id));
        if (leaked.length)
          failures.push(`${where} → names A's ids ${leaked.join(', ')}: ${res.text.slice(0, 200)}`);
      }
    }
    expect(failures).toEqual([]);
    expect(await snapshotOfA()).toEqual(before);
  });

  it('shows A to the admin with all_tenants', async () => {
    const all = await root.get('/volumes/detail?all_tenants=1');
    expect(all.body.volumes.map((x: { id: string }) => x.id)).toEqual(
      expect.arrayContaining([ids.volume, ids.transferVolume]),
    );
    expect((await root.get(`/volumes/${ids.volume}`)).status).toBe(200);
    expect((await root.get(`/backups/${ids.backup}`)).status).toBe(200);
  });
});
