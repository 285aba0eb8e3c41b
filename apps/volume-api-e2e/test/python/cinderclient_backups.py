"""Drives python-cinderclient's backups manager (what `cinder backup-create/list/show/restore/delete`
call) against the block-storage API in noauth mode.

Usage: cinderclient_backups.py <endpoint ending in /v3> <project id>
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


def wait(get, want, timeout=60):
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
            raise RuntimeError('went to error: %s' % getattr(obj, 'fail_reason', ''))
        time.sleep(0.05)
    raise RuntimeError('timed out waiting for %s' % want)


v = c.volumes.create(1, name='pyclient-bk-src')
wait(lambda: c.volumes.get(v.id), 'available')
b = c.backups.create(v.id, name='pyclient-backup', description='by cinderclient', metadata={'k': 'v'})
report['created'] = b.status in ('creating', 'available')
report['became'] = wait(lambda: c.backups.get(b.id), 'available')
shown = c.backups.get(b.id)
report['shown'] = {'name': shown.name, 'size': shown.size, 'volume_id_matches': shown.volume_id == v.id,
                   'is_incremental': shown.is_incremental, 'metadata': shown.metadata}
report['listed'] = [(x.name, x.status) for x in c.backups.list(detailed=True)]
inc = c.backups.create(v.id, name='pyclient-inc', incremental=True)
wait(lambda: c.backups.get(inc.id), 'available')
report['incremental'] = c.backups.get(inc.id).is_incremental
r = c.restores.restore(inc.id, name='pyclient-restored')
report['restore_name'] = r.volume_name
report['restored'] = wait(lambda: c.volumes.get(r.volume_id), 'available')
try:
    c.backups.delete(b.id)
    report['delete_parent'] = 'accepted'
except exceptions.BadRequest as e:
    report['delete_parent'] = e.code
c.backups.delete(inc.id)
report['inc_deleted'] = wait(lambda: c.backups.get(inc.id), 'gone')
c.backups.delete(b.id)
report['deleted'] = wait(lambda: c.backups.get(b.id), 'gone')
report['after_delete'] = [x.name for x in c.backups.list()]
c.volumes.delete(r.volume_id)
c.volumes.delete(v.id)
print(json.dumps(report, sort_keys=True))
