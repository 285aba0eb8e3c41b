import { InvalidInputError, NotAcceptableError } from '@osc/errors';
import {
  MAX_MICROVERSION,
  MICROVERSION_TABLE,
  featureGate,
  formatMicroversion,
  isAtLeast,
  microversionResponseHeaders,
  negotiateMicroversion,
  parseMicroversion,
  supports,
} from './microversion';
import { rootVersionsDocument, v2VersionDocument, v3VersionDocument } from './version-documents';

describe('microversion table', () => {
  it('lists every minor version from 3.0 to 3.71 once, in order', () => {
    expect(MICROVERSION_TABLE.map((r) => r.version)).toEqual(Array.from({ length: 72 }, (_, i) => `3.${i}`));
  });
  it('names each feature once', () => {
    const all = MICROVERSION_TABLE.flatMap((r) => [...r.features]);
    expect(new Set(all).size).toBe(all.length);
  });
  it.each([
    ['volume.group-id', '3.13'],
    ['volume.provider-id', '3.21'],
    ['list.reject-invalid-filters', '3.31'],
    ['list.with-count', '3.45'],
    ['volume.create-from-backup', '3.47'],
    ['volume.shared-targets', '3.48'],
    ['volume.strict-bodies', '3.53'],
    ['volume.time-filters', '3.60'],
    ['volume.cluster-name', '3.61'],
    ['default-types.api', '3.62'],
    ['volume.volume-type-id', '3.63'],
    ['volume.encryption-key-id', '3.64'],
    ['volume.consumes-quota', '3.65'],
    ['volume.shared-targets-nullable', '3.69'],
  ] as const)('gates %s at %s', (feature, version) => {
    expect(formatMicroversion(featureGate(feature))).toBe(version);
    const [maj, min] = version.split('.').map(Number) as [number, number];
    expect(supports({ major: maj, minor: min }, feature)).toBe(true);
    expect(supports({ major: maj, minor: min - 1 }, feature)).toBe(false);
  });
  it('compares numerically, not lexically', () => {
    expect(isAtLeast({ major: 3, minor: 10 }, '3.9')).toBe(true);
    expect(isAtLeast({ major: 3, minor: 9 }, '3.10')).toBe(false);
  });
});

describe('parseMicroversion', () => {
  it.each([
    ['3.0', '3.0'],
    ['3.45', '3.45'],
    ['3.71', '3.71'],
    ['latest', '3.71'],
    ['LATEST', '3.71'],
    [' 3.5 ', '3.5'],
  ])('accepts %p as %s', (raw, expected) => {
    expect(formatMicroversion(parseMicroversion(raw))).toBe(expected);
  });
  it.each(['3', '3.', '.3', '03.1', '3.01', 'v3.1', '3.1.1', 'abc', '', '3,1', '-3.1', '0.5'])(
    'rejects malformed %p with 400',
    (raw) => {
      expect(() => parseMicroversion(raw)).toThrow(InvalidInputError);
      expect(() => parseMicroversion(raw)).toThrow(/MajorNum\.MinorNum/);
    },
  );
  it.each(['3.72', '2.0', '4.0', '1.0', '3.100', '99999999999999999999.0'])(
    'rejects out-of-range %p with 406',
    (raw) => {
      expect(() => parseMicroversion(raw)).toThrow(NotAcceptableError);
      expect(() => parseMicroversion(raw)).toThrow('Minimum is 3.0 and maximum is 3.71');
    },
  );
});

describe('negotiateMicroversion', () => {
  it.each([
    [{}, '3.0'],
    [{ 'openstack-api-version': 'volume 3.45' }, '3.45'],
    [{ 'openstack-api-version': 'Volume 3.45' }, '3.45'],
    [{ 'openstack-api-version': 'compute 2.1, volume 3.60' }, '3.60'],
    [{ 'openstack-api-version': 'volume 3.5, volume 3.7' }, '3.5'],
    [{ 'openstack-api-version': 'volume latest' }, '3.71'],
    [{ 'openstack-api-version': ['volume 3.27'] }, '3.27'],
    [{ 'openstack-volume-microversion': '3.12' }, '3.12'],
    [{ 'openstack-api-version': 'volume 3.20', 'openstack-volume-microversion': '3.12' }, '3.20'],
  ])('%p → %s', (headers, expected) => {
    expect(formatMicroversion(negotiateMicroversion(headers))).toBe(expected);
  });
  it.each([
    [{ 'openstack-api-version': 'compute 2.1' }, InvalidInputError],
    [{ 'openstack-api-version': '' }, InvalidInputError],
    [{ 'openstack-api-version': 'volume' }, InvalidInputError],
    [{ 'openstack-api-version': 'volume 3.1 extra' }, InvalidInputError],
    [{ 'openstack-api-version': 'volume 3.x' }, InvalidInputError],
    [{ 'openstack-api-version': 'volume 3.99' }, NotAcceptableError],
    [{ 'openstack-volume-microversion': 'nope' }, InvalidInputError],
  ])('%p fails', (headers, error) => {
    expect(() => negotiateMicroversion(headers)).toThrow(error);
  });
  it('renders the response headers', () => {
    expect(microversionResponseHeaders(MAX_MICROVERSION)).toEqual({
      'OpenStack-API-Version': 'volume 3.71',
      Vary: 'OpenStack-API-Version',
    });
  });
});

describe('version documents', () => {
  it('describes v3 with the table range', () => {
    expect(v3VersionDocument('http://h:8776/')).toEqual({
      versions: [
        {
          id: 'v3.0',
          status: 'CURRENT',
          version: '3.71',
          min_version: '3.0',
          updated: '2023-08-31T00:00:00Z',
          links: [
            { rel: 'describedby', type: 'text/html', href: 'https://docs.openstack.org/' },
            { rel: 'self', href: 'http://h:8776/v3/' },
          ],
          'media-types': [
            { base: 'application/json', type: 'application/vnd.openstack.volume+json;version=3' },
          ],
        },
      ],
    });
  });
  it('lists v2 as SUPPORTED only when enabled', () => {
    expect(
      rootVersionsDocument('http://h', { v2Enabled: true }).versions.map((v) => [v.id, v.status]),
    ).toEqual([
      ['v2.0', 'SUPPORTED'],
      ['v3.0', 'CURRENT'],
    ]);
    expect(rootVersionsDocument('http://h', { v2Enabled: false }).versions.map((v) => v.id)).toEqual([
      'v3.0',
    ]);
    const v2 = v2VersionDocument('http://h').versions[0]!;
    expect([v2.version, v2.min_version, v2.links[1]!.href]).toEqual(['', '', 'http://h/v2/']);
  });
});
