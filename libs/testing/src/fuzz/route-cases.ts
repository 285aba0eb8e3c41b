import type { Rng } from './rng';
import type { FuzzRequest } from './runner';
import {
  deepJsonText,
  mutateJson,
  oddHeaderValue,
  oddJson,
  oddJsonText,
  oddPathSegment,
  oddQueryValue,
  oddString,
} from './values';

/** One registered route (`GET /v3/:project_id/volumes/:id`) and how often to aim at it. */
export interface FuzzRoute {
  readonly method: string;
  readonly url: string;
  /** Relative weight (default 1). */
  readonly weight?: number;
}

/** What a route walk needs to know about one API. */
export interface FuzzTarget {
  readonly routes: readonly FuzzRoute[];
  /** Valid values of a path parameter (`id` after `volumes`), so the other dimensions reach past the lookup. */
  param(name: string, before: string, route: FuzzRoute): readonly string[];
  /** Valid-looking JSON bodies for a route (the mutations start from these); empty: random bodies. */
  bodies(route: FuzzRoute): readonly unknown[];
  /** Text bodies the route reads (Mistral's YAML uploads), mutated like the JSON ones. */
  texts?(route: FuzzRoute): readonly string[];
  /** Query keys the API's lists read (limit, marker, sort, filters). */
  readonly queryKeys: readonly string[];
  /** Sane values for those keys. */
  queryValue(key: string, rng: Rng): string;
  /** Headers of a well-formed request (identity, microversion). */
  headers(rng: Rng, route: FuzzRoute): Record<string, string>;
  /** API-specific odd headers (identity, token, microversion): a few names with odd values. */
  oddHeaders(rng: Rng): Record<string, string | null>;
  /** Content type of a well-formed body. */
  readonly contentType: string;
  readonly bodyLimit: number;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

const ODD_CONTENT_TYPES = [
  'application/json; charset=utf-16',
  'application/json;;',
  'application/json; charset=latin1',
  'APPLICATION/JSON',
  'application/json, text/plain',
  'text/plain',
  'text/plain; charset=utf-8',
  'application/x-yaml',
  'text/yaml',
  'application/xml',
  'multipart/form-data; boundary=x',
  'application/x-www-form-urlencoded',
  'application/octet-stream',
  'application/vnd.openstack.volume+json',
  '*/*',
  'json',
  '',
  ';',
];
const ODD_ACCEPTS = [
  'application/xml',
  'text/html',
  '*/*',
  '',
  'application/json;q=0',
  'application/vnd.openstack.volume+json;version=3.0',
  'x/y, */*;q=0.1',
];

/** `POST /a/:id/b` → its segments with the static segment before each parameter. */
const segmentsOf = (url: string): string[] => url.split('/').slice(1);

/**
 * A case generator that walks `target.routes`: each case picks a route and one dimension to make
 * odd (body, query string, path parameters or headers) while the others stay well-formed, so the
 * odd part reaches the code that reads it instead of stopping at the first check.
 */
export function routeCases(target: FuzzTarget): (rng: Rng, index: number) => FuzzRequest {
  const routes = target.routes.map((r) => [r.weight ?? 1, r] as const);
  return (rng) => {
    const route = rng.weighted(routes);
    const method = route.method;
    const segments = segmentsOf(route.url);
    const params = segments.map((s, i) => (s.startsWith(':') || s === '*' ? i : -1)).filter((i) => i >= 0);
    const takesBody = BODY_METHODS.has(method);
    const focus = rng.weighted<'body' | 'query' | 'path' | 'headers'>([
      [takesBody ? 45 : 4, 'body'],
      [takesBody ? 15 : 35, 'query'],
      [params.length ? 20 : 0, 'path'],
      [20, 'headers'],
    ]);
    let label: string = focus;

    // Path: every parameter well-formed except one when the case is about the path.
    const oddAt = focus === 'path' ? rng.pick(params) : -1;
    const path = segments
      .map((s, i) => {
        if (s === '*')
          return i === oddAt
            ? oddPathSegment(rng)
            : rng.pick(['x', 'executions/x', 'v3/volumes', 'assets/x.js', 'index.html']);
        if (!s.startsWith(':')) return s;
        if (i === oddAt) return oddPathSegment(rng);
        const valid = target.param(s.slice(1), segments[i - 1] ?? '', route);
        return encodeURIComponent(valid.length ? rng.pick(valid) : 'x');
      })
      .join('/');

    // Query: odd pairs for a query case, sometimes sane list params otherwise.
    const pairs: string[] = [];
    if (focus === 'query') {
      const n = rng.int(1, 5);
      for (let i = 0; i < n; i++) {
        const key = rng.chance(0.85)
          ? rng.pick(target.queryKeys)
          : encodeURIComponent(oddString(rng, 30).replace(/[\ud800-\udfff]/g, '?'));
        const value = rng.chance(0.25) ? target.queryValue(key, rng) : oddQueryValue(rng);
        pairs.push(rng.chance(0.05) ? key : `${key}=${value}`);
        // a key twice makes an array in the parsed query
        if (rng.chance(0.15)) pairs.push(`${key}=${target.queryValue(key, rng)}`);
      }
      if (rng.chance(0.05))
        pairs.push(rng.pick(['&&', '=', '=x', 'a[b]=c', 'a[]=1&a[]=2', '%zz=1', '\u00e9=1']));
    } else if (method === 'GET' && rng.chance(0.3)) {
      const key = rng.pick(target.queryKeys);
      pairs.push(`${key}=${encodeURIComponent(target.queryValue(key, rng))}`);
    }
    const query = pairs.length
      ? `?${pairs.join('&').replace(/[^\x21-\xff]/g, (c) => encodeURIComponent(c))}`
      : '';

    // Headers: well-formed, then odd ones for a header case.
    const headers: Record<string, string> = target.headers(rng, route);
    let body: string | Buffer | undefined;
    let chunked = false;
    const seeds = target.bodies(route);
    const seed = seeds.length ? rng.pick(seeds) : {};
    const texts = target.texts?.(route) ?? [];
    if (takesBody || focus === 'body') {
      headers['content-type'] = target.contentType;
      if (focus !== 'body') {
        body = texts.length && rng.chance(0.5) ? rng.pick(texts) : JSON.stringify(seed);
        if (texts.length && !body.startsWith('{')) headers['content-type'] = 'text/plain';
      } else {
        const kind = rng.weighted<string>([
          [texts.length ? 25 : 0, 'yaml'],
          [35, 'mutated'],
          [8, 'random'],
          [12, 'text'],
          [5, 'deep'],
          [5, 'huge'],
          [3, 'oversize'],
          [3, 'chunked'],
          [4, 'content-type'],
        ]);
        label = `body:${kind}`;
        switch (kind) {
          case 'yaml':
            headers['content-type'] = rng.pick([
              'text/plain',
              'text/plain',
              'application/x-yaml',
              'text/yaml',
            ]);
            body = mutateText(rng, rng.pick(texts));
            break;
          case 'mutated':
            body = JSON.stringify(mutateJson(rng, seed));
            break;
          case 'random':
            body = JSON.stringify(oddJson(rng)) ?? 'null';
            break;
          case 'text':
            body = oddJsonText(rng, seed);
            break;
          case 'deep': {
            const depth = rng.pick([100, 1000, 3000, 10000]);
            const key = Object.keys(seed ?? {})[0];
            body = deepJsonText(rng, depth, key && rng.chance(0.7) ? key : undefined);
            break;
          }
          case 'huge': {
            // one string field just under the limit, sometimes multi-byte
            const unit = rng.pick(['x', 'é', '\u{1f600}']);
            const room = Math.floor((target.bodyLimit - 200) / Buffer.byteLength(unit));
            body = JSON.stringify(mutateJson(rng, seed)).replace(
              /"[^"]*"(?=\s*[,}\]])/,
              JSON.stringify(unit.repeat(rng.int(room >> 1, room))),
            );
            break;
          }
          case 'oversize': {
            const size = rng.pick([
              target.bodyLimit + 1,
              target.bodyLimit + 1024,
              target.bodyLimit * 2,
              target.bodyLimit * 4,
            ]);
            body = `{"${Object.keys(seed ?? {})[0] ?? 'x'}":"${'a'.repeat(size)}"}`;
            break;
          }
          case 'chunked':
            chunked = true;
            body = rng.chance(0.5) ? JSON.stringify(mutateJson(rng, seed)) : JSON.stringify(seed);
            break;
          default:
            headers['content-type'] = rng.pick(ODD_CONTENT_TYPES);
            body = texts.length && rng.chance(0.3) ? rng.pick(texts) : JSON.stringify(seed);
            break;
        }
      }
    }

    if (focus === 'headers') {
      const kind = rng.weighted<string>([
        [takesBody ? 4 : 1, 'content-type'],
        [1, 'accept'],
        [6, 'api'],
        [1, 'extra'],
      ]);
      label = `headers:${kind}`;
      if (kind === 'content-type') {
        if (body === undefined) body = JSON.stringify(seed);
        headers['content-type'] = rng.chance(0.8) ? rng.pick(ODD_CONTENT_TYPES) : oddHeaderValue(rng);
        if (rng.chance(0.1)) delete headers['content-type'];
      } else if (kind === 'accept') {
        headers['accept'] = rng.chance(0.7) ? rng.pick(ODD_ACCEPTS) : oddHeaderValue(rng);
      } else if (kind === 'api') {
        for (const [name, value] of Object.entries(target.oddHeaders(rng))) {
          if (value === null) delete headers[name];
          else headers[name] = value;
        }
      } else {
        headers[
          rng.pick([
            'x-forwarded-host',
            'x-forwarded-proto',
            'x-openstack-request-id',
            'x-compute-request-id',
            'origin',
            'range',
            'if-match',
            'cookie',
          ])
        ] = oddHeaderValue(rng);
      }
    }

    return {
      route: `${method} ${route.url}`,
      method,
      path: `/${path}${query}`,
      headers,
      body,
      chunked,
      focus: label,
    };
  };
}

const YAML_TOKENS = [
  '\u0000',
  '{',
  '}',
  '[',
  ']',
  ':',
  '&a',
  '*a',
  '!!python/object',
  '!!binary',
  '%',
  '<%',
  '%>',
  '{{',
  '"',
  "'",
  '\t',
  '\n  ',
  '-',
  '? ',
  '|',
  '>',
  '#',
  '\ud800',
  '\u{1f600}',
  'ä',
  '2.0',
  'null',
  '~',
  '---',
  '...',
  '<< : *a',
  '0x1',
  '.inf',
  '2001-01-01',
];

/** A text document (YAML) with one to six edits: cut, inserted token, duplicated or swapped lines. */
export function mutateText(rng: Rng, seed: string): string {
  let text = seed;
  const edits = rng.int(1, 6);
  for (let e = 0; e < edits; e++) {
    const at = text.length ? rng.int(0, text.length - 1) : 0;
    const lines = text.split('\n');
    const li = rng.int(0, Math.max(0, lines.length - 1));
    switch (rng.int(0, 5)) {
      case 0:
        text = text.slice(0, at) + text.slice(at + rng.int(1, 40));
        break;
      case 1:
        text = text.slice(0, at) + rng.pick(YAML_TOKENS) + text.slice(at);
        break;
      case 2:
        text = text.slice(0, at) + rng.pick(YAML_TOKENS) + text.slice(at + 1);
        break;
      case 3:
        lines.splice(li, 0, lines[li] ?? '');
        text = lines.join('\n');
        break;
      case 4: {
        const other = rng.int(0, Math.max(0, lines.length - 1));
        [lines[li], lines[other]] = [lines[other] ?? '', lines[li] ?? ''];
        text = lines.join('\n');
        break;
      }
      default:
        // a value replaced by something of another kind
        text = text.replace(
          /: [^\n]+/,
          `: ${rng.pick(['[1, 2]', '{a: 1}', '~', "''", '-1', 'yes', '9999999999999999999999', `"${'x'.repeat(rng.pick([300, 5000]))}"`, '*a', '&a x'])}`,
        );
        break;
    }
  }
  return text;
}
