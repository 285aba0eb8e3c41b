import { InvalidInputError } from '@osc/errors';
import {
  assertChunkParameters,
  assertIncrementalCompatible,
  backupObjectPrefix,
  changedRanges,
  dataObjectName,
  DEFAULT_CHUNK_PARAMETERS,
  defaultBackupContainer,
  hashFileDocument,
  hashFileDigests,
  hashFileObjectName,
  manifestDocument,
  manifestObjectName,
  nonZeroRanges,
  parseBackupCodec,
  parseManifestObjects,
  planChunks,
} from './chunk-format';

const at = new Date('2024-03-05T07:08:09Z');
const desc = {
  backupId: 'b1',
  volumeId: 'v1',
  name: 'n',
  description: null,
  createdAt: '2024-03-05T07:08:09.000000',
  parentId: null,
};

describe('backup chunk format', () => {
  it.each([
    ['zlib', 'zlib'],
    ['gzip', 'zlib'],
    ['BZ2', 'bz2'],
    ['bzip2', 'bz2'],
    ['zstd', 'zstd'],
    ['none', 'none'],
    ['off', 'none'],
    ['no', 'none'],
  ])('codec %s → %s', (name, codec) => {
    expect(parseBackupCodec(name)).toBe(codec);
  });
  it.each([
    ['all zeros', [1, 1, 1, 1], 4096, []],
    ['no zeros', [0, 0, 0, 0], 4096, [[0, 4096]]],
    [
      'zeros between data',
      [0, 1, 1, 0],
      4096,
      [
        [0, 1024],
        [3072, 1024],
      ],
    ],
    ['short last block', [1, 0, 0], 2500, [[1024, 1476]]],
    [
      'runs split at maxRun',
      [0, 0, 0, 0],
      4096,
      [
        [0, 2048],
        [2048, 2048],
      ],
    ],
  ])('full backups store the non-zero runs only: %s', (_, zero, length, expected) => {
    const maxRun = _ === 'runs split at maxRun' ? 2048 : 1 << 20;
    expect(
      nonZeroRanges(zero as number[], 1024, length as number, maxRun).map((r) => [r.offset, r.length]),
    ).toEqual(expected);
  });
  it('rejects unknown codecs', () => {
    expect(() => parseBackupCodec('lz4')).toThrow(InvalidInputError);
  });
  it('names objects', () => {
    expect(
      backupObjectPrefix('posix', { volumeId: 'v1', backupId: 'b1', availabilityZone: 'nova', at }),
    ).toBe('volume_v1_20240305070809_backup_b1');
    expect(
      backupObjectPrefix('object-store', { volumeId: 'v1', backupId: 'b1', availabilityZone: 'nova', at }),
    ).toBe('volume_v1/20240305070809/az_nova_backup_b1');
    expect(dataObjectName('p', 1)).toBe('p-00001');
    expect(dataObjectName('p', 123456)).toBe('p-123456');
    expect(manifestObjectName('p')).toBe('p_metadata');
    expect(hashFileObjectName('p')).toBe('p_sha256file');
    expect(defaultBackupContainer('posix', 'abcdef')).toBe('ab/cd/abcdef');
    expect(defaultBackupContainer('object-store', 'abcdef')).toBe('volumebackups');
  });
  it('checks chunk parameters', () => {
    expect(() => assertChunkParameters(DEFAULT_CHUNK_PARAMETERS.posix)).not.toThrow();
    expect(() => assertChunkParameters(DEFAULT_CHUNK_PARAMETERS['object-store'])).not.toThrow();
    expect(() => assertChunkParameters({ chunkSize: 100, blockSize: 32 })).toThrow(/multiple/);
    expect(() => assertChunkParameters({ chunkSize: 0, blockSize: 32 })).toThrow(/multiple/);
  });
  it('plans chunks', () => {
    expect(planChunks(10, 4)).toEqual([
      { offset: 0, length: 4 },
      { offset: 4, length: 4 },
      { offset: 8, length: 2 },
    ]);
    expect(planChunks(0, 4)).toEqual([]);
  });
  it('finds maximal changed runs', () => {
    const parent = ['a', 'b', 'c', 'd', 'e'];
    expect(changedRanges(parent, ['a', 'X', 'Y', 'd', 'Z'], 10, 50, 100)).toEqual([
      { offset: 10, length: 20 },
      { offset: 40, length: 10 },
    ]);
    expect(changedRanges(parent, parent, 10, 50, 100)).toEqual([]);
    expect(changedRanges(['a'], ['X', 'Y', 'Z'], 10, 25, 10)).toEqual([
      { offset: 0, length: 10 },
      { offset: 10, length: 10 },
      { offset: 20, length: 5 },
    ]);
  });
  it('refuses incompatible incrementals', () => {
    expect(() =>
      assertIncrementalCompatible({ parentBlockSize: 1, blockSize: 2, parentVolumeBytes: 1, volumeBytes: 1 }),
    ).toThrow(/Do a full backup/);
    expect(() =>
      assertIncrementalCompatible({ parentBlockSize: 1, blockSize: 1, parentVolumeBytes: 1, volumeBytes: 2 }),
    ).toThrow(/Do a full backup/);
    expect(() =>
      assertIncrementalCompatible({ parentBlockSize: 1, blockSize: 1, parentVolumeBytes: 2, volumeBytes: 2 }),
    ).not.toThrow();
  });
  it('writes sorted manifests that round-trip', () => {
    const objects = [{ name: 'p-00001', offset: 0, length: 4, compression: 'zlib' as const, md5: 'm' }];
    const text = manifestDocument(desc, objects, '{"x": 1}');
    expect(Object.keys(JSON.parse(text))).toEqual([
      'backup_description',
      'backup_id',
      'backup_name',
      'created_at',
      'objects',
      'parent_id',
      'version',
      'volume_id',
      'volume_meta',
    ]);
    expect(text).toContain('\n  "backup_description": null');
    expect(parseManifestObjects(text)).toEqual(objects);
    expect(() => parseManifestObjects('nope')).toThrow(/not JSON/);
    expect(() => parseManifestObjects('{"objects":[{"a":1}]}')).toThrow(/malformed/);
  });
  it('writes the hash file', () => {
    expect(JSON.parse(hashFileDocument(desc, 32768, ['h1', 'h2']))).toEqual({
      version: '1.0.0',
      backup_id: 'b1',
      volume_id: 'v1',
      backup_name: 'n',
      backup_description: null,
      created_at: desc.createdAt,
      chunk_size: 32768,
      sha256s: ['h1', 'h2'],
    });
  });
  it('reads the digests of a hash file compactly, of ours and of Cinder, or says it cannot', () => {
    const hex = (n: number) => n.toString(16).padStart(2, '0').repeat(32);
    const ours = hashFileDocument(
      { ...desc, description: 'not "sha256s": ["' + 'f'.repeat(64) + '"], "chunk_size": 7' },
      32768,
      [hex(1), hex(171)],
    );
    const read = hashFileDigests(Buffer.from(ours, 'utf8'));
    expect(read?.blockSize).toBe(32768);
    expect(read?.count).toBe(2);
    expect(Buffer.from(read!.digests).toString('hex')).toBe(hex(1) + hex(171));
    // Cinder's json.dumps: one line, its own key order, upper-case hex accepted
    const cinder = `{"backup_id": "b", "backup_description": "x", "chunk_size": 65536, "sha256s": ["${hex(2).toUpperCase()}", "${hex(3)}"], "version": 1}`;
    const c = hashFileDigests(Buffer.from(cinder));
    expect([c?.blockSize, c?.count]).toEqual([65536, 2]);
    expect(Buffer.from(c!.digests).toString('hex')).toBe(hex(2) + hex(3));
    expect(hashFileDigests(Buffer.from('{"chunk_size": 4, "sha256s": []}'))?.count).toBe(0);
    for (const bad of [
      '{"sha256s": []}',
      '{"chunk_size": 0, "sha256s": []}',
      `{"chunk_size": 4, "sha256s": ["${'g'.repeat(64)}"]}`,
      `{"chunk_size": 4, "sha256s": ["${'a'.repeat(63)}"]}`,
      `{"chunk_size": 4, "sha256s": ["${'a'.repeat(64)}" "${'a'.repeat(64)}"]}`,
      `{"chunk_size": 4, "sha256s": ["${'a'.repeat(64)}"`,
      '{"chunk_size": 4, "sha256s": 5}',
      'not json',
    ])
      expect(hashFileDigests(Buffer.from(bad))).toBeNull();
  });
});
