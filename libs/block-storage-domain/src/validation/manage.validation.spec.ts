import { InvalidInputError } from '@osc/errors';
import { parseMicroversion } from '../microversions/microversion';
import { managedIdOf, manageRefFile, parseManageSnapshot, parseManageVolume } from './manage.validation';

const mv = parseMicroversion;
const UUID = '0b7c9d2e-1f3a-4b5c-8d6e-7f8091a2b3c4';
const message = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidInputError);
    return (e as Error).message;
  }
  throw new Error('no error');
};

describe('manage volume body', () => {
  it('reads every field, with defaults', () => {
    expect(
      parseManageVolume({ volume: { host: 'h@b#p', ref: { 'source-name': 'volume-1' } } }, mv('3.0')),
    ).toEqual({
      host: 'h@b#p',
      cluster: null,
      ref: { 'source-name': 'volume-1' },
      name: null,
      description: null,
      volumeType: null,
      availabilityZone: null,
      metadata: {},
      bootable: false,
    });
    const full = parseManageVolume(
      {
        volume: {
          host: 'h@b',
          ref: 'volume-1',
          name: ' n ',
          description: 'd',
          volume_type: 't',
          availability_zone: 'nova',
          metadata: { a: 'b' },
          bootable: 'true',
          extra: 1,
        },
      },
      mv('3.0'),
    );
    expect(full).toMatchObject({
      host: 'h@b',
      ref: 'volume-1',
      name: 'n',
      description: 'd',
      volumeType: 't',
      availabilityZone: 'nova',
      metadata: { a: 'b' },
      bootable: true,
    });
  });

  it('needs the envelope and a ref that is an object or a string', () => {
    expect(message(() => parseManageVolume(undefined, mv('3.0')))).toContain(
      "Missing required element 'volume'",
    );
    expect(message(() => parseManageVolume({ volume: { host: 'h@b' } }, mv('3.0')))).toContain(
      "'ref' is a required property",
    );
    expect(message(() => parseManageVolume({ volume: { host: 'h@b', ref: 3 } }, mv('3.0')))).toContain(
      "is not of type 'object', 'string'",
    );
    expect(
      message(() => parseManageVolume({ volume: { host: 'h@b', ref: {} }, other: 1 }, mv('3.0'))),
    ).toContain('Additional properties');
  });

  it('takes exactly one of host and cluster (cluster from 3.16)', () => {
    expect(message(() => parseManageVolume({ volume: { ref: {} } }, mv('3.0')))).toBe(
      'Invalid input received: Host field is missing.',
    );
    expect(message(() => parseManageVolume({ volume: { ref: {}, cluster: 'c' } }, mv('3.15')))).toBe(
      'Invalid input received: Host field is missing.',
    );
    expect(parseManageVolume({ volume: { ref: {}, cluster: 'c' } }, mv('3.16'))).toMatchObject({
      host: null,
      cluster: 'c',
    });
    expect(
      message(() => parseManageVolume({ volume: { ref: {}, cluster: 'c', host: 'h@b' } }, mv('3.16'))),
    ).toBe('Invalid input received: One and only one of cluster and host must be set.');
    expect(message(() => parseManageVolume({ volume: { ref: {}, host: 7 } }, mv('3.0')))).toContain(
      "is not of type 'string'",
    );
  });

  it('validates the optional fields', () => {
    expect(
      message(() => parseManageVolume({ volume: { host: 'h@b', ref: {}, bootable: 'maybe' } }, mv('3.0'))),
    ).toContain('not a valid boolean');
    expect(
      message(() => parseManageVolume({ volume: { host: 'h@b', ref: {}, metadata: { a: 1 } } }, mv('3.0'))),
    ).toContain("is not of type 'string'");
    expect(
      message(() =>
        parseManageVolume({ volume: { host: 'h@b', ref: {}, name: 'x'.repeat(256) } }, mv('3.0')),
      ),
    ).toContain('too long');
  });
});

describe('manage snapshot body', () => {
  it('needs volume_id and ref, and nothing else', () => {
    expect(
      parseManageSnapshot({
        snapshot: {
          volume_id: UUID,
          ref: { 'source-id': UUID },
          name: 'n',
          description: null,
          metadata: { k: 'v' },
        },
      }),
    ).toEqual({
      volumeId: UUID,
      ref: { 'source-id': UUID },
      name: 'n',
      description: null,
      metadata: { k: 'v' },
    });
    expect(message(() => parseManageSnapshot({ snapshot: { ref: {} } }))).toContain(
      "'volume_id' is a required property",
    );
    expect(message(() => parseManageSnapshot({ snapshot: { volume_id: UUID } }))).toContain(
      "'ref' is a required property",
    );
    expect(message(() => parseManageSnapshot({ snapshot: { volume_id: 'nope', ref: {} } }))).toContain(
      'volume_id',
    );
    expect(message(() => parseManageSnapshot({ snapshot: { volume_id: UUID, ref: {}, size: 1 } }))).toContain(
      "'size' was unexpected",
    );
  });
});

describe('references', () => {
  it('name a file by source-name, source-id or as a string', () => {
    expect(manageRefFile({ 'source-name': 'volume-a' }, 'volume')).toBe('volume-a');
    expect(manageRefFile({ 'source-id': 'a' }, 'snapshot')).toBe('snapshot-a');
    expect(manageRefFile({ 'source-name': 'x', 'source-id': 'y' }, 'volume')).toBe('x');
    expect(manageRefFile('volume-z', 'volume')).toBe('volume-z');
    expect(manageRefFile({}, 'volume')).toBeNull();
    expect(manageRefFile({ 'source-name': 5 }, 'volume')).toBeNull();
  });

  it('find the id in a back-end file name', () => {
    expect(managedIdOf(`volume-${UUID}`, 'volume')).toBe(UUID);
    expect(managedIdOf(`volume-${UUID.toUpperCase()}`, 'volume')).toBe(UUID);
    expect(managedIdOf(`snapshot-${UUID}`, 'volume')).toBeNull();
    expect(managedIdOf('volume-../x', 'volume')).toBeNull();
  });
});
