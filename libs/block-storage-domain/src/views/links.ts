import type { Timestamp } from '../model/resources';

/**
 * How links are built for one request (BS-1.8): `baseUrl` is the configured public endpoint or
 * the request's scheme and host; `projectSegment` is the project id when the request URL carried
 * it (links then carry it too); `apiPrefix` is `v3` or `v2`.
 */
export interface LinkContext {
  readonly baseUrl: string;
  readonly projectSegment: string | null;
  readonly apiPrefix: 'v2' | 'v3';
}

export interface Link {
  readonly rel: string;
  readonly href: string;
}

const trimBase = (base: string): string => base.replace(/\/+$/, '');
const pid = (ctx: LinkContext): string => (ctx.projectSegment === null ? '' : `${ctx.projectSegment}/`);

/** `self` and `bookmark` links of a resource. */
export function resourceLinks(ctx: LinkContext, collection: string, id: string): Link[] {
  const base = trimBase(ctx.baseUrl);
  return [
    { rel: 'self', href: `${base}/${ctx.apiPrefix}/${pid(ctx)}${collection}/${id}` },
    { rel: 'bookmark', href: `${base}/${pid(ctx)}${collection}/${id}` },
  ];
}

/**
 * The `<key>_links` next link (BS-5.3): the collection path (keeping `/detail`) with every original
 * query parameter and `marker` set to the last id of the page.
 */
export function nextPageLink(
  ctx: LinkContext,
  collectionPath: string,
  query: Readonly<Record<string, string | readonly string[] | undefined>>,
  lastId: string,
): Link {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (k === 'marker' || v === undefined) continue;
    for (const item of typeof v === 'string' ? [v] : v) params.append(k, item);
  }
  params.append('marker', lastId);
  return {
    rel: 'next',
    href: `${trimBase(ctx.baseUrl)}/${ctx.apiPrefix}/${pid(ctx)}${collectionPath}?${params.toString()}`,
  };
}

const ISO_LIKE = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]00(?::?00)?)?$/;

/**
 * Renders a timestamp as `YYYY-MM-DDTHH:MM:SS.ffffff` (UTC, six fractional digits, no zone), null
 * when unset (BS-1.6). Strings already in UTC keep their microseconds.
 */
export function formatTimestamp(t: Timestamp | null | undefined): string | null {
  if (t === null || t === undefined) return null;
  if (typeof t === 'string') {
    // Fast path: already `YYYY-MM-DDTHH:MM:SS.ffffff` (the repositories select this form).
    if (t.length === 26 && t.charCodeAt(10) === 84 && t.charCodeAt(19) === 46) return t;
    const m = ISO_LIKE.exec(t.trim());
    if (m) return `${m[1]}T${m[2]}.${(m[3] ?? '').padEnd(6, '0').slice(0, 6)}`;
    const parsed = new Date(t);
    if (Number.isNaN(parsed.getTime())) return null;
    return formatTimestamp(parsed);
  }
  if (Number.isNaN(t.getTime())) return null;
  const iso = t.toISOString();
  return `${iso.slice(0, 19)}.${iso.slice(20, 23)}000`;
}
