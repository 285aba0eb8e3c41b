"""Drives python-cinderclient (Debian python3-cinderclient, noauth) against the block-storage API.

Usage: cinderclient_check.py <endpoint ending in /v3> <project id>
Prints one JSON report on stdout; any failure raises (non-zero exit, traceback on stderr).
"""
import json
import sys
import time

from cinderclient import client
from cinderclient import exceptions
from cinderclient.contrib.noauth import CinderNoAuthPlugin
from keystoneauth1 import session

endpoint, project = sys.argv[1], sys.argv[2]
c = client.Client('3.71', session=session.Session(auth=CinderNoAuthPlugin('admin', project, endpoint=endpoint)))
report = {}


def wait(get, want, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            obj = get()
        except exceptions.NotFound:
            if want == 'gone':
                return 'gone'
            raise
        if obj.status == want:
            return obj.status
        if obj.status == 'error':
            raise RuntimeError('went to error')
        time.sleep(0.05)
    raise RuntimeError('timed out waiting for %s' % want)


report['types_before'] = sorted(t.name for t in c.volume_types.list())
t = c.volume_types.create('pyclient-type', description='made by cinderclient')
t.set_keys({'volume_backend_name': 'file', 'capabilities:thin_provisioning_support': '<is> True'})
report['type_keys'] = c.volume_types.get(t.id).get_keys()
report['types_after'] = sorted(t.name for t in c.volume_types.list())
report['default_type'] = c.volume_types.default().name

v = c.volumes.create(1, name='pyclient-vol', volume_type='pyclient-type', metadata={'k': 'v'})
report['created_status'] = v.status
report['became'] = wait(lambda: c.volumes.get(v.id), 'available')
listed = c.volumes.list(detailed=True)
report['listed'] = [(x.name, x.size, x.volume_type, x.status) for x in listed]
report['listed_with_count'] = c.volumes.list(detailed=True, search_opts={'with_count': True}) and True
shown = c.volumes.get(v.id)
report['shown'] = {'metadata': shown.metadata, 'bootable': shown.bootable, 'type_id_present': hasattr(shown, 'volume_type_id')}
c.volumes.extend(v, 2)
wait(lambda: c.volumes.get(v.id), 'available')
report['extended_size'] = c.volumes.get(v.id).size
try:
    c.volumes.create(1, volume_type='no-such-type')
    report['unknown_type'] = 'accepted'
except exceptions.NotFound as e:
    report['unknown_type'] = e.code
c.volumes.delete(v)
report['deleted'] = wait(lambda: c.volumes.get(v.id), 'gone')
report['after_delete'] = [x.name for x in c.volumes.list()]
c.volume_types.delete(t)
report['types_final'] = sorted(t.name for t in c.volume_types.list())
print(json.dumps(report, sort_keys=True))
