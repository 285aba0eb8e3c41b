import { formatMicroversion, MAX_MICROVERSION, MIN_MICROVERSION } from './microversion';

export interface VersionLink {
  readonly rel: string;
  readonly href: string;
  readonly type?: string;
}

export interface VersionEntry {
  readonly id: string;
  readonly status: string;
  readonly version: string;
  readonly min_version: string;
  readonly updated: string;
  readonly links: readonly VersionLink[];
  readonly 'media-types': readonly { readonly base: string; readonly type: string }[];
}

const stripSlash = (base: string): string => base.replace(/\/+$/, '');

const describedBy: VersionLink = {
  rel: 'describedby',
  type: 'text/html',
  href: 'https://docs.openstack.org/',
};

/** The v3 entry of the version documents (BS-4.1); `version` is the table's maximum. */
export function v3VersionEntry(baseUrl: string): VersionEntry {
  return {
    id: 'v3.0',
    status: 'CURRENT',
    version: formatMicroversion(MAX_MICROVERSION),
    min_version: formatMicroversion(MIN_MICROVERSION),
    updated: '2023-08-31T00:00:00Z',
    links: [describedBy, { rel: 'self', href: `${stripSlash(baseUrl)}/v3/` }],
    'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.volume+json;version=3' }],
  };
}

/**
 * The v2 entry. Seed 001 lists v2 as SUPPORTED (upstream's last v2 release said DEPRECATED); the
 * seed wins (spec section 14). v2 has no microversions, so both version fields are empty.
 */
export function v2VersionEntry(baseUrl: string): VersionEntry {
  return {
    id: 'v2.0',
    status: 'SUPPORTED',
    version: '',
    min_version: '',
    updated: '2017-02-25T12:00:00Z',
    links: [describedBy, { rel: 'self', href: `${stripSlash(baseUrl)}/v2/` }],
    'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.volume+json;version=2' }],
  };
}

/** `GET /` (answered with 300): every enabled API version. */
export const rootVersionsDocument = (
  baseUrl: string,
  options: { v2Enabled: boolean },
): { versions: VersionEntry[] } => ({
  versions: options.v2Enabled
    ? [v2VersionEntry(baseUrl), v3VersionEntry(baseUrl)]
    : [v3VersionEntry(baseUrl)],
});

/** `GET /v3/` (200). */
export const v3VersionDocument = (baseUrl: string): { versions: VersionEntry[] } => ({
  versions: [v3VersionEntry(baseUrl)],
});

/** `GET /v2/` (200). */
export const v2VersionDocument = (baseUrl: string): { versions: VersionEntry[] } => ({
  versions: [v2VersionEntry(baseUrl)],
});
