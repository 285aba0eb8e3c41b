"""Drives python-cinderclient's migrate_volume and retype (on-demand) against two back ends.

Usage: cinderclient_migrate.py <endpoint ending in /v3> <project id> <host part of the back ends>
Prints one JSON report on stdout; any failure raises (non-zero exit, traceback on stderr).
"""
import json
import sys
import time

from cinderclient import client
from cinderclient.contrib.noauth import CinderNoAuthPlugin
from keystoneauth1 import session

endpoint, project, host = sys.argv[1], sys.argv[2], sys.argv[3]
report = {}


def until(get, done, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        obj = get()
        if done(obj):
            return obj
        time.sleep(0.05)
    raise RuntimeError('timed out')


for mv in ('3.0', '3.71'):
    # 3.16+ sends "cluster": null beside the host.
    c = client.Client(mv, session=session.Session(auth=CinderNoAuthPlugin('admin', project, endpoint=endpoint)))
    v = c.volumes.create(1, name='moving-' + mv)
    until(lambda: c.volumes.get(v.id), lambda o: o.status == 'available')
    start = getattr(c.volumes.get(v.id), 'os-vol-host-attr:host')
    start_backend = start.split('@')[1].split('#')[0]
    other = 'beta' if start_backend == 'alpha' else 'alpha'
    c.volumes.migrate_volume(v, '%s@%s' % (host, other), False, False)
    moved = until(lambda: c.volumes.get(v.id), lambda o: o.migration_status in ('success', 'error'))
    back_type = c.volume_types.create('back-%s-%s' % (start_backend, mv.replace('.', '')))
    back_type.set_keys({'volume_backend_name': start_backend})
    c.volumes.retype(v, back_type.name, 'on-demand')
    retyped = until(lambda: c.volumes.get(v.id), lambda o: o.volume_type == back_type.name and o.status == 'available')
    report[mv] = {
        'migrated': [getattr(moved, 'os-vol-host-attr:host') == '%s@%s#%s' % (host, other, other), moved.migration_status, moved.status],
        'retyped': [getattr(retyped, 'os-vol-host-attr:host') == start, retyped.migration_status],
    }
    c.volumes.delete(v)

print(json.dumps(report, sort_keys=True))
