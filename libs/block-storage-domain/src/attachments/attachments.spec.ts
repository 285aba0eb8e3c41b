import { InvalidInputError } from '@osc/errors';
import { parseMicroversion } from '../microversions/microversion';
import { canTransition } from '../state/transition-table';
import { VOLUME_TRANSITIONS } from '../state/volume-status';
import {
  attachFlowSources,
  attachmentDetailView,
  connectionMode,
  createAttachMode,
  isMultiattachSpec,
  statusAfterDetach,
  type AttachmentRecord,
} from './attachment';
import {
  parseAttachArgs,
  parseAttachmentAction,
  parseAttachmentCreate,
  parseAttachmentUpdate,
  parseDetachArgs,
} from './attachment.validation';
import {
  attachmentConnectionInfo,
  fileLocationInfo,
  localConnection,
  parseFileLocationInfo,
} from './local-connection';

const mv = (v: string) => parseMicroversion(v);
const V = '11111111-2222-3333-4444-555555555555';
const S = '66666666-7777-8888-9999-000000000000';

describe('attach flow sources', () => {
  it('every source other than the target itself is an edge of the volume table', () => {
    for (const to of ['available', 'reserved', 'attaching', 'in-use', 'detaching'] as const) {
      for (const from of attachFlowSources(to))
        if (from !== to)
          expect([from, to, canTransition(VOLUME_TRANSITIONS, from, to)]).toEqual([from, to, true]);
    }
  });
  it.each([
    ['attaching', ['available', 'reserved', 'attaching', 'in-use']],
    ['in-use', ['available', 'reserved', 'attaching', 'in-use', 'detaching']],
    ['available', ['available', 'reserved', 'attaching', 'in-use', 'detaching']],
    ['reserved', ['available', 'reserved', 'attaching', 'in-use']],
  ] as const)('attachFlowSources(%s)', (to, sources) => {
    expect(attachFlowSources(to)).toEqual(sources);
  });
});

describe('statusAfterDetach (Cinder _get_statuses_from_attachments)', () => {
  const vol = { status: 'in-use' as const, migrationStatus: null };
  it.each([
    [[], 'available', 'detached'],
    [['attached'], 'in-use', 'attached'],
    [['reserved', 'attaching'], 'attaching', 'attaching'],
    [['reserved'], 'reserved', 'reserved'],
    [['detaching', 'reserved'], 'detaching', 'detaching'],
    [['error_attaching'], 'available', 'detached'],
    [['error_detaching', 'attached'], 'in-use', 'attached'],
  ] as const)('%j → %s / %s', (left, status, attach) => {
    expect(statusAfterDetach(left, vol)).toEqual({ status, attachStatus: attach });
  });
  it('leaves a migrating or uploading volume its status when the last attachment goes', () => {
    expect(statusAfterDetach([], { status: 'in-use', migrationStatus: 'migrating' })).toEqual({
      status: null,
      attachStatus: 'detached',
    });
    expect(statusAfterDetach([], { status: 'uploading', migrationStatus: null })).toEqual({
      status: null,
      attachStatus: 'detached',
    });
    expect(statusAfterDetach([], { status: 'in-use', migrationStatus: 'success' })).toEqual({
      status: 'available',
      attachStatus: 'detached',
    });
    expect(statusAfterDetach(['attached'], { status: 'uploading', migrationStatus: null })).toEqual({
      status: 'in-use',
      attachStatus: 'attached',
    });
  });
});

describe('multiattach types', () => {
  it('are the types whose multiattach spec is exactly <is> True', () => {
    expect(isMultiattachSpec({ multiattach: '<is> True' })).toBe(true);
    expect(isMultiattachSpec({ multiattach: 'True' })).toBe(false);
    expect(isMultiattachSpec({ multiattach: '<is> False' })).toBe(false);
    expect(isMultiattachSpec({})).toBe(false);
  });
});

describe('modes', () => {
  it('create stores ro for readonly volumes, else the 3.54 mode, else null', () => {
    expect(createAttachMode('True', 'rw')).toBe('ro');
    expect(createAttachMode(undefined, 'rw')).toBe('rw');
    expect(createAttachMode('False', null)).toBe('null');
  });
  it('a connection uses the attachment mode, else the connector mode, else rw', () => {
    expect(connectionMode('ro', { mode: 'rw' })).toBe('ro');
    expect(connectionMode('null', { mode: 'ro' })).toBe('ro');
    expect(connectionMode('null', {})).toBe('rw');
  });
});

describe('attachment views', () => {
  const a: AttachmentRecord = {
    id: 'a1',
    volumeId: V,
    instanceUuid: S,
    attachedHost: 'h',
    mountpoint: '/dev/vdb',
    attachStatus: 'reserved',
    attachMode: 'null',
    attachTime: null,
    detachTime: null,
    connector: null,
    connectionInfo: null,
  };
  it('renders unset times as empty strings and a missing connection as {}', () => {
    expect(attachmentDetailView(a)).toEqual({
      id: 'a1',
      status: 'reserved',
      instance: S,
      volume_id: V,
      attached_at: '',
      detached_at: '',
      attach_mode: 'null',
      connection_info: {},
    });
    expect(attachmentDetailView({ ...a, attachTime: '2024-01-02T03:04:05.123456' })['attached_at']).toBe(
      '2024-01-02T03:04:05.123456',
    );
  });
});

describe('attachment bodies', () => {
  it('parses create: volume_uuid required, connector {} means none, mode only from 3.54', () => {
    expect(
      parseAttachmentCreate({ attachment: { volume_uuid: V, instance_uuid: S, connector: {} } }, mv('3.27')),
    ).toEqual({ volumeId: V, instanceUuid: S, connector: null, mode: null });
    expect(
      parseAttachmentCreate(
        { attachment: { volume_uuid: V, connector: { host: 'h' }, mode: 'ro' } },
        mv('3.54'),
      ),
    ).toEqual({ volumeId: V, instanceUuid: null, connector: { host: 'h' }, mode: 'ro' });
    expect(() => parseAttachmentCreate({ attachment: { volume_uuid: V, mode: 'ro' } }, mv('3.53'))).toThrow(
      "Additional properties are not allowed ('mode' was unexpected)",
    );
    expect(() => parseAttachmentCreate({ attachment: { instance_uuid: S } }, mv('3.27'))).toThrow(
      "'volume_uuid' is a required property",
    );
    expect(() => parseAttachmentCreate({ attachment: { volume_uuid: 'x' } }, mv('3.27'))).toThrow(
      "Invalid input for field/attribute volume_uuid. Value: x. 'x' is not a 'uuid'",
    );
    expect(() =>
      parseAttachmentCreate({ attachment: { volume_uuid: V, connector: 'c' } }, mv('3.27')),
    ).toThrow(InvalidInputError);
    expect(() => parseAttachmentCreate({ attachment: { volume_uuid: V, mode: 'wo' } }, mv('3.54'))).toThrow(
      "Invalid input for field/attribute mode. Value: wo. wo is not one of ['rw', 'ro']",
    );
    expect(() => parseAttachmentCreate({}, mv('3.27'))).toThrow("'attachment' is a required property");
  });
  it('parses update: a connector with at least one key', () => {
    expect(parseAttachmentUpdate({ attachment: { connector: { host: 'h' } } })).toEqual({ host: 'h' });
    expect(() => parseAttachmentUpdate({ attachment: { connector: {} } })).toThrow(
      'does not have enough properties',
    );
    expect(() => parseAttachmentUpdate({ attachment: {} })).toThrow("'connector' is a required property");
  });
  it('parses the os-complete action', () => {
    expect(parseAttachmentAction({ 'os-complete': null })).toBe('os-complete');
    expect(() => parseAttachmentAction({ 'os-other': {} })).toThrow('There is no such action: os-other');
    expect(() => parseAttachmentAction({ 'os-complete': {}, x: 1 })).toThrow(InvalidInputError);
  });
  it('parses os-attach and os-detach', () => {
    expect(parseAttachArgs({ instance_uuid: S, mountpoint: '/dev/vdb' })).toEqual({
      instanceUuid: S,
      hostName: null,
      mountpoint: '/dev/vdb',
      mode: 'rw',
    });
    expect(parseAttachArgs({ host_name: 'h', mountpoint: '/m', mode: 'ro' })).toEqual({
      instanceUuid: null,
      hostName: 'h',
      mountpoint: '/m',
      mode: 'ro',
    });
    expect(() => parseAttachArgs({ mountpoint: '/m' })).toThrow(
      "'instance_uuid' or 'host_name' is a required property",
    );
    expect(() => parseAttachArgs({ instance_uuid: S })).toThrow("'mountpoint' is a required property");
    expect(parseDetachArgs(null)).toEqual({ attachmentId: null });
    expect(parseDetachArgs({ attachment_id: S })).toEqual({ attachmentId: S });
    expect(() => parseDetachArgs({ attachment_id: 'nope' })).toThrow(InvalidInputError);
  });
});

describe('local connection', () => {
  const subject = {
    volumeId: V,
    host: 'h@file#file',
    encrypted: false,
    adminMetadata: {},
    cacheableSpec: null,
    frontEndQos: null,
  };
  const location = fileLocationInfo('machine-1', '/data/volumes');
  it('round-trips location_info', () => {
    expect(parseFileLocationInfo(location)).toEqual({ machine: 'machine-1', directory: '/data/volumes' });
    expect(parseFileLocationInfo('rbd:x')).toBeNull();
  });
  it("answers a 'local' connection with the volume file's path for a connector on the back end's machine", () => {
    const info = localConnection(subject, location, { host: 'machine-1', initiator: null });
    expect(info).toEqual({
      driver_volume_type: 'local',
      data: {
        device_path: `/data/volumes/volume-${V}`,
        qos_specs: null,
        access_mode: 'rw',
        encrypted: false,
        cacheable: false,
        enforce_multipath: false,
      },
    });
    expect(attachmentConnectionInfo(info, 'att', {})).toEqual({
      ...info.data,
      driver_volume_type: 'local',
      attachment_id: 'att',
      enforce_multipath: false,
    });
  });
  it('takes access_mode from attached_mode, then readonly', () => {
    expect(
      localConnection({ ...subject, adminMetadata: { readonly: 'True' } }, location, { host: 'machine-1' })
        .data['access_mode'],
    ).toBe('ro');
    expect(
      localConnection({ ...subject, adminMetadata: { readonly: 'True', attached_mode: 'rw' } }, location, {
        host: 'machine-1',
      }).data['access_mode'],
    ).toBe('rw');
  });
  it('refuses other hosts, host-less and string connectors, and back ends without a file location', () => {
    expect(() => localConnection(subject, location, { host: 'elsewhere' })).toThrow(
      "Invalid input received: Connector doesn't have required information: the back end h@file serves 'local' connections on host machine-1 only, not on elsewhere.",
    );
    expect(() => localConnection(subject, location, { ip: '10.0.0.1' })).toThrow(InvalidInputError);
    expect(() => localConnection(subject, location, 'iqn.x')).toThrow(InvalidInputError);
    expect(() => localConnection(subject, undefined, { host: 'machine-1' })).toThrow(
      'reports no file location',
    );
  });
});
