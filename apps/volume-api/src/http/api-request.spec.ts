import { InvalidInputError, NotAcceptableError, NotFoundError, UnsupportedMediaTypeError } from '@osc/errors';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { apiRequestOf, routes, volumeApiOnRequest } from './api-request';

const P = '0123456789abcdef0123456789abcdef';

function fake(url: string, headers: Record<string, string> = {}, projectId = P) {
  const sent: Record<string, string> = {};
  const request = {
    url,
    headers: { host: 'h:8776', ...headers },
    protocol: 'http',
    query: {},
    requestContext: { requestId: 'req-1', userId: 'u', projectId, roles: ['member'], isAdmin: false },
  } as unknown as FastifyRequest;
  const reply = {
    headers(h: Record<string, string>) {
      Object.assign(sent, h);
      return reply;
    },
  } as unknown as FastifyReply;
  return { request, reply, sent };
}

describe('volumeApiOnRequest', () => {
  it.each([
    [`/v3/${P}/volumes`, {}, '3.0', P],
    ['/v3/volumes/detail', { 'openstack-api-version': 'volume 3.60' }, '3.60', null],
    ['/v3/types', { 'openstack-api-version': 'volume latest' }, '3.71', null],
    [`/v3/${P}/default-types`, {}, '3.0', P],
  ])('%s %p → mv %s, project segment %p', async (url, headers, mv, segment) => {
    const { request, reply, sent } = fake(url, headers);
    await volumeApiOnRequest(request, reply);
    expect(sent['OpenStack-API-Version']).toBe(`volume ${mv}`);
    expect(sent['Vary']).toBe('OpenStack-API-Version');
    expect(request.volumeProjectSegment).toBe(segment);
    const api = apiRequestOf(request);
    expect(api.links).toEqual({ baseUrl: 'http://h:8776', projectSegment: segment, apiPrefix: 'v3' });
    expect(api.collectionPath).toBe(
      url
        .split('/')
        .slice(segment === null ? 2 : 3)
        .join('/'),
    );
  });
  it('ignores microversions on v2 and needs its project', async () => {
    const { request, reply, sent } = fake(`/v2/${P}/volumes`, { 'openstack-api-version': 'volume 3.50' });
    await volumeApiOnRequest(request, reply);
    expect(sent).toEqual({});
    expect(request.volumeApiPrefix).toBe('v2');
    expect(request.volumeMicroversion).toEqual({ major: 3, minor: 0 });
  });
  it.each([
    [`/v3/${P}/volumes`, { 'openstack-api-version': 'volume 4.0' }, P, NotAcceptableError],
    [`/v3/${P}/volumes`, { 'openstack-api-version': 'volume 3.x' }, P, InvalidInputError],
    ['/v3/ABC/volumes', {}, P, NotFoundError],
    [`/v3/${P}/volumes`, {}, 'ffff', InvalidInputError],
    ['/v3/volumes', { 'content-type': 'text/plain', 'content-length': '3' }, P, UnsupportedMediaTypeError],
  ])('%s %p (caller %s) fails', async (url, headers, project, error) => {
    const { request, reply, sent } = fake(url, headers, project);
    await expect(volumeApiOnRequest(request, reply)).rejects.toThrow(error);
    expect(sent['OpenStack-API-Version']).toBe('volume 3.0');
  });
  it('accepts JSON bodies and body-less requests of any type', async () => {
    for (const headers of <Record<string, string>[]>[
      { 'content-type': 'application/json; charset=utf-8', 'content-length': '2' },
      { 'content-type': 'application/vnd.openstack.volume+json', 'content-length': '2' },
      { 'content-type': 'text/plain' },
    ]) {
      const { request, reply } = fake('/v3/volumes', headers);
      await expect(volumeApiOnRequest(request, reply)).resolves.toBeUndefined();
    }
  });
  it('mounts every collection under both v3 forms and v2', () => {
    expect(routes('volumes')).toEqual(['v3/:project_id/volumes', 'v3/volumes', 'v2/:project_id/volumes']);
    expect(routes('default-types', { v2: false })).toEqual([
      'v3/:project_id/default-types',
      'v3/default-types',
    ]);
  });
});
