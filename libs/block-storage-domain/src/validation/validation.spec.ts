import { InvalidInputError } from '@osc/errors';
import fc from 'fast-check';
import { parseMicroversion } from '../microversions/microversion';
import {
  parseBoolean,
  parseDescription,
  parseMetadata,
  parseName,
  parseSize,
  parseUuid,
  rejectUnknownKeys,
  requireEnvelope,
} from './primitives';
import {
  parseActionBody,
  parseCreateSnapshot,
  parseCreateVolume,
  parseExtendArgs,
  parseMetaItemBody,
  parseMetadataBody,
  parseMigrateArgs,
  parseRetypeArgs,
  parseRevertArgs,
  parseUpdateSnapshot,
  parseUpdateVolume,
} from './volume.validation';
import {
  parseCreateEncryption,
  parseCreateVolumeType,
  parseExtraSpecs,
  parseSetDefaultType,
  parseSetExtraSpecs,
  parseTypeAccessAction,
  parseUpdateEncryption,
  parseUpdateExtraSpec,
  parseUpdateVolumeType,
} from './volume-type.validation';

const mv = parseMicroversion;
const UUID = '0b7c9d2e-1f3a-4b5c-8d6e-7f8091a2b3c4';

describe('primitives', () => {
  it.each([
    [true, true],
    [false, false],
    ['True', true],
    ['yes', true],
    ['y', true],
    ['t', true],
    ['1', true],
    ['ON', true],
    ['False', false],
    ['no', false],
    ['n', false],
    ['f', false],
    ['0', false],
    ['OFF', false],
  ])('parseBoolean(%p) = %p', (input, expected) => {
    expect(parseBoolean(input, 'b')).toBe(expected);
  });
  it.each(['tRuE', 'maybe', 1, 0, null, [], {}, '', 'Y'])('parseBoolean(%p) → 400', (input) => {
    expect(() => parseBoolean(input, 'b')).toThrow(InvalidInputError);
    expect(() => parseBoolean(input, 'b')).toThrow(/^Invalid input for field\/attribute b\. Value: /);
  });
  it.each([
    [1, 1],
    ['10', 10],
    [2147483647, 2147483647],
    [' 5 ', 5],
  ])('parseSize(%p) = %p', (input, expected) => {
    expect(parseSize(input)).toBe(expected);
  });
  it.each([0, -1, 2147483648, 1.5, '1.5', 'abc', '', null, true, [], {}, '1e3', '0x10', 1e300])(
    'parseSize(%p) → 400',
    (input) => {
      expect(() => parseSize(input)).toThrow(InvalidInputError);
    },
  );
  it.each([
    ['  vol  ', { required: true }, 'vol'],
    ['', {}, ''],
    [null, { nullable: true }, null],
    ['x'.repeat(255), { required: true }, 'x'.repeat(255)],
  ] as const)('parseName(%p, %p)', (input, options, expected) => {
    expect(parseName(input, 'name', options)).toBe(expected);
  });
  it.each([
    ['   ', { required: true }],
    ['', { required: true }],
    ['x'.repeat(256), {}],
    [null, { required: true }],
    [5, {}],
  ] as const)('parseName(%p, %p) → 400', (input, options) => {
    expect(() => parseName(input, 'name', options)).toThrow(InvalidInputError);
  });
  it('parses descriptions', () => {
    expect(parseDescription(null)).toBeNull();
    expect(parseDescription('a\tb\nc')).toBe('a\tb\nc');
    expect(() => parseDescription('x'.repeat(256))).toThrow(InvalidInputError);
    expect(() => parseDescription('bell\u0007')).toThrow(InvalidInputError);
    expect(() => parseDescription(1)).toThrow(InvalidInputError);
  });
  it('parses UUIDs case-insensitively and lower-cases them', () => {
    expect(parseUuid(UUID.toUpperCase(), 'id')).toBe(UUID);
    for (const bad of ['abc', UUID.replace(/-/g, ''), `${UUID}0`, null, 1])
      expect(() => parseUuid(bad, 'id')).toThrow(InvalidInputError);
  });
  it.each([
    [{ a: 'b', 'k-_:. /9': 'v' }, null],
    [{ '': 'v' }, /does not match/],
    [{ 'a*b': 'v' }, /does not match/],
    [{ ['k'.repeat(256)]: 'v' }, /does not match/],
    [{ a: 1 }, /is not of type 'string'/],
    [{ a: null }, /is not of type 'string'/],
    [{ a: 'v'.repeat(256) }, /too long/],
    [[], /is not of type 'object'/],
    ['x', /is not of type 'object'/],
  ])('parseMetadata(%p)', (input, error) => {
    if (error === null) expect(parseMetadata(input)).toEqual(input);
    else expect(() => parseMetadata(input)).toThrow(error);
  });
  it('rejects unknown keys of strict objects', () => {
    expect(() => rejectUnknownKeys({ a: 1, b: 2 }, ['a'], 'thing')).toThrow(
      `Invalid input for field/attribute thing. Value: {"a":1,"b":2}. Additional properties are not allowed ('b' was unexpected)`,
    );
    expect(() => rejectUnknownKeys({ x: 1 }, [], null)).toThrow(
      "Additional properties are not allowed ('x' was unexpected)",
    );
  });
  it('requires the envelope key', () => {
    expect(() => requireEnvelope(undefined, 'volume')).toThrow(InvalidInputError);
    expect(() => requireEnvelope([], 'volume')).toThrow(InvalidInputError);
    expect(() => requireEnvelope({}, 'volume')).toThrow("'volume' is a required property");
    expect(() => requireEnvelope({ volume: 'x' }, 'volume')).toThrow(/not of type 'object'/);
  });
  it('never throws anything but InvalidInputError on arbitrary JSON', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        for (const f of [
          () => parseCreateVolume(value, mv('3.71')),
          () => parseCreateVolume({ volume: value }, mv('3.0')),
          () => parseCreateVolumeType(value),
          () => parseCreateVolumeType({ volume_type: value }),
          () => parseUpdateVolumeType({ volume_type: value }),
          () => parseCreateSnapshot({ snapshot: value }, mv('3.66')),
          () => parseCreateEncryption({ encryption: value }),
          () => parseTypeAccessAction(value),
          () => parseMetadata(value),
          () => parseSize(value),
        ]) {
          try {
            f();
          } catch (e) {
            if (!(e instanceof InvalidInputError)) throw e;
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('volume type bodies', () => {
  it('parses a full create body', () => {
    expect(
      parseCreateVolumeType({
        volume_type: {
          name: ' gold ',
          description: 'fast',
          extra_specs: { 'capabilities:x': 'y', n: null },
          'os-volume-type-access:is_public': 'false',
        },
      }),
    ).toEqual({
      name: 'gold',
      description: 'fast',
      isPublic: false,
      extraSpecs: { 'capabilities:x': 'y', n: null },
    });
    expect(parseCreateVolumeType({ volume_type: { name: 'a' } })).toEqual({
      name: 'a',
      description: null,
      isPublic: true,
      extraSpecs: {},
    });
  });
  it.each([
    [{ volume_type: {} }, "'name' is a required property"],
    [{ volume_type: { name: '' } }, /name/],
    [
      { volume_type: { name: 'a', is_public: true } },
      "Additional properties are not allowed ('is_public' was unexpected)",
    ],
    [{ volume_type: { name: 'a', extra_specs: { 'bad key!': 'x' } } }, /does not match/],
    [
      { volume_type: { name: 'a', extra_specs: { multiattach: '<is> True', cacheable: '<is> True' } } },
      /multiattach and cacheable/,
    ],
    [{ volume_type: { name: 'a', 'os-volume-type-access:is_public': 'maybe' } }, /not a valid boolean/],
    [{ type: {} }, "'volume_type' is a required property"],
  ])('create %p → 400', (body, msg) => {
    expect(() => parseCreateVolumeType(body)).toThrow(msg);
  });
  it.each([
    [{ volume_type: { name: 'n' } }, { name: 'n' }],
    [{ volume_type: { description: null } }, { description: null }],
    [{ volume_type: { is_public: 'true' } }, { isPublic: true }],
    [{ volume_type: { name: null, description: 'd' } }, { description: 'd' }],
  ])('update %p', (body, expected) => {
    expect(parseUpdateVolumeType(body)).toEqual(expected);
  });
  it.each([
    [{ volume_type: {} }, /Specify volume type name, description, is_public/],
    [{ volume_type: { name: '  ' } }, /name/],
    [{ volume_type: { extra: 1 } }, /Additional properties/],
  ])('update %p → 400', (body, msg) => {
    expect(() => parseUpdateVolumeType(body)).toThrow(msg);
  });
  it('parses extra specs', () => {
    expect(parseSetExtraSpecs({ extra_specs: { a: 'b', 'x:y.z-1_2': '<is> True', n: 5 } })).toEqual({
      a: 'b',
      'x:y.z-1_2': '<is> True',
      n: '5',
    });
    expect(() => parseExtraSpecs({ 'a;b': 'c' })).toThrow(/does not match/);
    expect(() => parseExtraSpecs({ a: { b: 1 } })).toThrow(/not of type 'string'/);
    expect(() => parseSetExtraSpecs({})).toThrow(/'extra_specs' is a required property/);
    expect(parseUpdateExtraSpec('k', { k: 'v' })).toEqual({ key: 'k', value: 'v' });
    expect(() => parseUpdateExtraSpec('k', { j: 'v' })).toThrow('Request body and URI mismatch');
    expect(() => parseUpdateExtraSpec('k', { k: 'v', j: 'w' })).toThrow(/exactly one/);
    expect(() => parseUpdateExtraSpec('k', {})).toThrow(/exactly one/);
  });
  it('parses encryption bodies', () => {
    expect(
      parseCreateEncryption({
        encryption: { provider: 'luks', key_size: '256', cipher: 'aes-xts-plain64', other: 1 },
      }),
    ).toEqual({
      provider: 'luks',
      controlLocation: 'front-end',
      keySize: 256,
      cipher: 'aes-xts-plain64',
    });
    expect(parseUpdateEncryption({ encryption: { control_location: 'back-end', key_size: null } })).toEqual({
      controlLocation: 'back-end',
      keySize: null,
    });
    expect(() => parseCreateEncryption({ encryption: {} })).toThrow("'provider' is a required property");
    expect(() =>
      parseCreateEncryption({ encryption: { provider: 'p', control_location: 'middle' } }),
    ).toThrow(/front-end/);
    expect(() => parseCreateEncryption({ encryption: { provider: 'p', key_size: 'big' } })).toThrow(
      /key_size/,
    );
    expect(() => parseCreateEncryption({ encryption: { provider: 'p', key_size: -1 } })).toThrow(/minimum/);
  });
  it('parses type access actions', () => {
    expect(parseTypeAccessAction({ addProjectAccess: { project: 'p1' } })).toEqual({
      action: 'addProjectAccess',
      project: 'p1',
    });
    expect(parseTypeAccessAction({ removeProjectAccess: { project: 'p1' } })).toEqual({
      action: 'removeProjectAccess',
      project: 'p1',
    });
    expect(() => parseTypeAccessAction({ fly: {} })).toThrow('There is no such action: fly');
    expect(() => parseTypeAccessAction({ addProjectAccess: { project: '' } })).toThrow(/too short/);
    expect(() => parseTypeAccessAction({ addProjectAccess: {} })).toThrow(/'project' is a required property/);
  });
  it('parses default type bodies', () => {
    expect(parseSetDefaultType({ default_type: { volume_type: 'gold' } })).toEqual({ volumeType: 'gold' });
    expect(() => parseSetDefaultType({ default_type: { volume_type: ' ' } })).toThrow(InvalidInputError);
    expect(() => parseSetDefaultType({ default_type: { volume_type: 'a', x: 1 } })).toThrow(
      /Additional properties/,
    );
  });
});

describe('volume bodies', () => {
  it('parses a create body with aliases and hints', () => {
    expect(
      parseCreateVolume(
        {
          volume: {
            size: '2',
            display_name: ' v ',
            display_description: 'd',
            volume_type: 'gold',
            metadata: { a: 'b' },
            availability_zone: 'nova',
            multiattach: false,
          },
          'OS-SCH-HNT:scheduler_hints': { same_host: [UUID] },
        },
        mv('3.0'),
      ),
    ).toEqual({
      size: 2,
      name: 'v',
      description: 'd',
      volumeType: 'gold',
      metadata: { a: 'b' },
      availabilityZone: 'nova',
      snapshotId: null,
      sourceVolid: null,
      backupId: null,
      imageRef: null,
      consistencygroupId: null,
      groupId: null,
      schedulerHints: { same_host: [UUID] },
    });
  });
  it('ignores backup_id and group_id below their gates and unknown keys below 3.53', () => {
    const body = { volume: { size: 1, backup_id: UUID, group_id: UUID, bogus: 1 } };
    const low = parseCreateVolume(body, mv('3.12'));
    expect([low.backupId, low.groupId]).toEqual([null, null]);
    const mid = parseCreateVolume(body, mv('3.47'));
    expect([mid.backupId, mid.groupId]).toEqual([UUID, UUID]);
    expect(() => parseCreateVolume(body, mv('3.53'))).toThrow(
      "Additional properties are not allowed ('bogus' was unexpected)",
    );
  });
  it('takes the size from a source', () => {
    expect(parseCreateVolume({ volume: { source_volid: UUID } }, mv('3.0')).size).toBeNull();
  });
  it.each([
    [{ volume: {} }, /size is required/],
    [{ volume: { size: 0 } }, /minimum of 1/],
    [{ volume: { size: 'x' } }, /size/],
    [{ volume: { size: 1, multiattach: true } }, /property of the volume type/],
    [{ volume: { size: 1, multiattach: 'maybe' } }, /not a valid boolean/],
    [{ volume: { snapshot_id: UUID, source_volid: UUID } }, /mutually exclusive/],
    [{ volume: { size: 1, snapshot_id: 'abc' } }, /snapshot_id.*uuid/],
    [{ volume: { size: 1, availability_zone: '' } }, /availability_zone/],
    [{ volume: { size: 1, metadata: { a: 1 } } }, /metadata/],
    [{ volume: { size: 1 }, extra: {} }, /Additional properties/],
    [{ volume: { size: 1 }, 'OS-SCH-HNT:scheduler_hints': 'x' }, /not of type 'object'/],
    [{ volume: [] }, /not of type 'object'/],
    [null, /Missing required element 'volume'/],
  ])('create %p → 400', (body, msg) => {
    expect(() => parseCreateVolume(body, mv('3.60'))).toThrow(msg);
  });
  it('parses updates', () => {
    expect(parseUpdateVolume({ volume: { display_name: 'n', metadata: { a: 'b' } } }, mv('3.0'))).toEqual({
      name: 'n',
      metadata: { a: 'b' },
    });
    expect(parseUpdateVolume({ volume: {} }, mv('3.52'))).toEqual({});
    expect(() => parseUpdateVolume({ volume: {} }, mv('3.53'))).toThrow(/does not have enough properties/);
    expect(() => parseUpdateVolume({ volume: { size: 3 } }, mv('3.0'))).toThrow(/Additional properties/);
  });
  it('parses actions', () => {
    expect(parseActionBody({ 'os-extend': { new_size: 3 } }, ['os-extend'])).toEqual({
      action: 'os-extend',
      args: { new_size: 3 },
    });
    expect(() => parseActionBody({ 'os-fly': {} }, ['os-extend'])).toThrow('There is no such action: os-fly');
    expect(() => parseActionBody({}, ['os-extend'])).toThrow(/no such action/);
    expect(() => parseActionBody([], ['os-extend'])).toThrow(InvalidInputError);
    expect(parseExtendArgs({ new_size: '4' })).toEqual({ newSize: 4 });
    expect(() => parseExtendArgs({})).toThrow(/'new_size' is a required property/);
    expect(() => parseExtendArgs({ new_size: 0 })).toThrow(/minimum/);
  });
  it('parses metadata bodies', () => {
    expect(parseMetadataBody({ metadata: { k: 'v' } })).toEqual({ k: 'v' });
    expect(() => parseMetadataBody({ meta: {} })).toThrow(/'metadata' is a required property/);
    expect(parseMetaItemBody('k', { meta: { k: 'v' } })).toEqual({ key: 'k', value: 'v' });
    expect(() => parseMetaItemBody('k', { meta: { j: 'v' } })).toThrow('Request body and URI mismatch');
    expect(() => parseMetaItemBody('k', { meta: { k: 'v', j: 'w' } })).toThrow(/exactly one/);
  });
});

describe('snapshot bodies', () => {
  it('parses create', () => {
    expect(
      parseCreateSnapshot(
        { snapshot: { volume_id: UUID, name: 's', force: 'true', metadata: { a: 'b' } } },
        mv('3.0'),
      ),
    ).toEqual({
      volumeId: UUID,
      name: 's',
      description: null,
      force: true,
      metadata: { a: 'b' },
    });
    expect(parseCreateSnapshot({ snapshot: { volume_id: UUID, force: false } }, mv('3.65')).force).toBe(
      false,
    );
    // Cinder's schema allows a null volume_id; the lookup answers 404 afterwards.
    expect(parseCreateSnapshot({ snapshot: { volume_id: null } }, mv('3.0')).volumeId).toBeNull();
  });
  it.each([
    [{ snapshot: {} }, "'volume_id' is a required property", '3.0'],
    [{ snapshot: { volume_id: 'x' } }, /uuid/, '3.0'],
    [{ snapshot: { volume_id: UUID, force: false } }, /force=False is not allowed/, '3.66'],
    [{ snapshot: { volume_id: UUID, size: 1 } }, /Additional properties/, '3.0'],
  ])('create %p → 400', (body, msg, version) => {
    expect(() => parseCreateSnapshot(body, mv(version))).toThrow(msg);
  });
  it('parses update', () => {
    expect(parseUpdateSnapshot({ snapshot: { display_description: 'x' } })).toEqual({ description: 'x' });
    expect(() => parseUpdateSnapshot({ snapshot: {} })).toThrow(/enough properties/);
  });
});

describe('retype and revert arguments', () => {
  it('parses os-retype strictly', () => {
    expect(parseRetypeArgs({ new_type: 'gold' })).toEqual({ newType: 'gold', migrationPolicy: null });
    expect(parseRetypeArgs({ new_type: 'gold', migration_policy: 'on-demand' })).toEqual({
      newType: 'gold',
      migrationPolicy: 'on-demand',
    });
    expect(() => parseRetypeArgs({})).toThrow("'new_type' is a required property");
    expect(() => parseRetypeArgs({ new_type: 1 })).toThrow("is not of type 'string'");
    expect(() => parseRetypeArgs({ new_type: 'gold', migration_policy: 'sometimes' })).toThrow(
      "is not one of ['on-demand', 'never']",
    );
    expect(() => parseRetypeArgs({ new_type: 'gold', extra: true })).toThrow('Additional properties');
  });
  it('parses os-migrate_volume: host required before 3.16, host or cluster (one of them) from 3.16', () => {
    expect(parseMigrateArgs({ host: 'h@b#p' }, mv('3.0'))).toEqual({
      host: 'h@b#p',
      cluster: null,
      forceHostCopy: false,
      lockVolume: false,
    });
    expect(parseMigrateArgs({ host: 'h@b', force_host_copy: 'True', lock_volume: true }, mv('3.15'))).toEqual(
      { host: 'h@b', cluster: null, forceHostCopy: true, lockVolume: true },
    );
    expect(() => parseMigrateArgs({}, mv('3.15'))).toThrow("'host' is a required property");
    expect(() => parseMigrateArgs({ host: 'h', cluster: 'c' }, mv('3.15'))).toThrow('Additional properties');
    expect(() => parseMigrateArgs({ host: null }, mv('3.15'))).toThrow("is not of type 'string'");
    expect(() => parseMigrateArgs({ host: 'x'.repeat(256) }, mv('3.0'))).toThrow('is too long');
    expect(() => parseMigrateArgs({ host: 'h', lock_volume: 'maybe' }, mv('3.0'))).toThrow(InvalidInputError);
    expect(parseMigrateArgs({ cluster: 'c1', host: null }, mv('3.16'))).toMatchObject({
      host: null,
      cluster: 'c1',
    });
    expect(() => parseMigrateArgs({}, mv('3.16'))).toThrow('Must specify host or cluster');
    expect(() => parseMigrateArgs({ host: 'h', cluster: 'c' }, mv('3.16'))).toThrow(
      'Only one of host and cluster may be given',
    );
  });
  it('parses revert leniently like Cinder (extra keys tolerated, snapshot_id string or null)', () => {
    expect(parseRevertArgs({ snapshot_id: 'abc', other: 1 })).toEqual({ snapshotId: 'abc' });
    expect(parseRevertArgs({})).toEqual({ snapshotId: null });
    expect(() => parseRevertArgs({ snapshot_id: 5 })).toThrow("is not of type 'string', 'null'");
  });
});
