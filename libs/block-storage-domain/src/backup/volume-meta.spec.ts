import { decodeVolumeMeta, encodeVolumeMeta, type BackedUpVolume } from './volume-meta';

const volume: BackedUpVolume = {
  id: 'v1',
  name: 'data',
  description: 'the data disk',
  size: 2,
  bootable: true,
  availabilityZone: 'nova',
  metadata: { role: 'db' },
  imageMetadata: null,
};

describe('volume_meta', () => {
  it('encodes the three sections of version 2', () => {
    expect(JSON.parse(encodeVolumeMeta(volume))).toEqual({
      version: 2,
      'volume-base-metadata': {
        id: 'v1',
        display_name: 'data',
        display_description: 'the data disk',
        size: 2,
        bootable: true,
        availability_zone: 'nova',
      },
      'volume-metadata': { role: 'db' },
      'volume-glance-metadata': {},
    });
    expect(JSON.parse(encodeVolumeMeta({ ...volume, imageMetadata: { os: 'linux' } }))).toMatchObject({
      'volume-glance-metadata': { os: 'linux' },
    });
  });

  it('decodes what it encodes', () => {
    expect(decodeVolumeMeta(encodeVolumeMeta(volume))).toEqual({
      metadata: { role: 'db' },
      bootable: true,
      name: 'data',
      description: 'the data disk',
    });
    expect(
      decodeVolumeMeta(encodeVolumeMeta({ ...volume, name: null, description: null, bootable: false })),
    ).toEqual({ metadata: { role: 'db' }, bootable: false, name: null, description: null });
  });

  it.each([
    ['not JSON', 'nope'],
    ['JSON null', 'null'],
    ['a number', '5'],
    ['an array', '[1]'],
  ])('reads %s as nothing to restore', (_, text) => {
    expect(decodeVolumeMeta(text)).toBeNull();
  });

  it.each([
    ['an empty object', '{}', { metadata: {}, bootable: false, name: null, description: null }],
    [
      'non-string metadata values',
      '{"volume-metadata": {"a": "1", "b": 2, "c": null}}',
      { metadata: { a: '1' }, bootable: false, name: null, description: null },
    ],
    [
      'a base section of the wrong types',
      '{"volume-base-metadata": {"display_name": 3, "display_description": {}, "bootable": "true"}}',
      { metadata: {}, bootable: false, name: null, description: null },
    ],
    [
      'a base section that is not an object',
      '{"volume-base-metadata": "x", "volume-metadata": {"k": "v"}}',
      { metadata: { k: 'v' }, bootable: false, name: null, description: null },
    ],
  ])('skips the unreadable fields of %s', (_, text, expected) => {
    expect(decodeVolumeMeta(text)).toEqual(expected);
  });
});
