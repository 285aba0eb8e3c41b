"""Drives python-cinderclient's legacy attach calls (reserve, initialize_connection, attach,
detach: what Nova's old attach flow calls) against the block-storage API in noauth mode.

Usage: cinderclient_attach.py <endpoint ending in /v3> <project id> <connector host> <server uuid>
Prints one JSON report on stdout; any failure raises (non-zero exit, traceback on stderr).
"""
import json
import sys
import time

from cinderclient import client
from cinderclient.contrib.noauth import CinderNoAuthPlugin
from keystoneauth1 import session

endpoint, project, host, server = sys.argv[1:5]
c = client.Client('3.71', session=session.Session(auth=CinderNoAuthPlugin('admin', project, endpoint=endpoint)))


def wait(want, vid, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = c.volumes.get(vid)
        if v.status == want:
            return v
        time.sleep(0.05)
    raise RuntimeError('timed out waiting for %s' % want)


v = c.volumes.create(1, name='pyclient-attach')
wait('available', v.id)
report = {}
c.volumes.reserve(v.id)
report['reserved'] = c.volumes.get(v.id).status
info = c.volumes.initialize_connection(v.id, {'host': host, 'initiator': None})
report['connection'] = {'driver_volume_type': info['driver_volume_type'], 'device_path': info['data']['device_path']}
c.volumes.attach(v.id, server, '/dev/vdb', mode='rw')
attached = c.volumes.get(v.id)
report['attached'] = attached.status
report['attachments'] = [[a['server_id'], a['device']] for a in attached.attachments]
c.volumes.detach(v.id, attached.attachments[0]['attachment_id'])
detached = c.volumes.get(v.id)
report['detached'] = detached.status
report['after'] = detached.attachments
c.volumes.delete(v.id)
print(json.dumps(report))
