#!/usr/bin/python3
"""Prepare a fresh Keystone (started by tools/keystone/start.sh) for the tempest run.

Creates the `service` project, the `service` role and our product's service user (who validates
tokens), pre-creates the member/reader roles tempest's dynamic credentials assign, and registers
the two services with their endpoints in the catalog:

  workflowv2  (mistral)   http://HOST:WF_PORT/v2
  volumev3    (cinderv3)  http://HOST:VOL_PORT/v3/%(project_id)s

usage: keystone_setup.py KEYSTONE_URL ADMIN_PASSWORD SERVICE_USER SERVICE_PASSWORD WF_PORT VOL_PORT
Only the standard library: the Keystone v3 API through urllib.
"""
import json
import sys
import urllib.request

url, admin_password, svc_user, svc_password, wf_port, vol_port = sys.argv[1:7]
v3 = url.rstrip('/') + '/v3'
region = 'RegionOne'


def call(method, path, body=None, token=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(v3 + path, data=data, method=method)
    req.add_header('Content-Type', 'application/json')
    if token:
        req.add_header('X-Auth-Token', token)
    with urllib.request.urlopen(req, timeout=30) as res:
        raw = res.read()
        return res.headers, (json.loads(raw) if raw else {})


headers, _ = call('POST', '/auth/tokens?nocatalog', {'auth': {
    'identity': {'methods': ['password'], 'password': {'user': {
        'name': 'admin', 'domain': {'id': 'default'}, 'password': admin_password}}},
    'scope': {'project': {'name': 'admin', 'domain': {'id': 'default'}}}}})
token = headers['X-Subject-Token']


def ensure(collection, key, name, body):
    _, found = call('GET', '/%s?name=%s' % (collection, name), token=token)
    if found[collection]:
        return found[collection][0]['id']
    _, made = call('POST', '/' + collection, {key: body}, token=token)
    return made[key]['id']


project = ensure('projects', 'project', 'service', {'name': 'service', 'domain_id': 'default'})
roles = {r: ensure('roles', 'role', r, {'name': r}) for r in ('service', 'admin', 'member', 'reader')}
user = ensure('users', 'user', svc_user, {
    'name': svc_user, 'domain_id': 'default', 'password': svc_password,
    'default_project_id': project})
call('PUT', '/projects/%s/users/%s/roles/%s' % (project, user, roles['service']), token=token)

for stype, name, link in (
        ('workflowv2', 'mistral', 'http://127.0.0.1:%s/v2' % wf_port),
        ('volumev3', 'cinderv3', 'http://127.0.0.1:%s/v3/%%(project_id)s' % vol_port)):
    _, made = call('POST', '/services', {'service': {'type': stype, 'name': name, 'enabled': True}},
                   token=token)
    for interface in ('public', 'internal', 'admin'):
        call('POST', '/endpoints', {'endpoint': {
            'service_id': made['service']['id'], 'interface': interface, 'url': link,
            'region_id': region, 'enabled': True}}, token=token)
    print('registered %s (%s) at %s' % (stype, name, link))
