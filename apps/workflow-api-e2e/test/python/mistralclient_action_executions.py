"""Runs actions directly through the real python-mistralclient; prints what it saw as JSON."""
import json
import sys
import time

from mistralclient.api import client
from mistralclient.api.base import APIException

c = client.client(mistral_url=sys.argv[1])
report = {}

sync = c.action_executions.create('std.echo', {'output': 'hi'})
report['sync'] = [sync.id, sync.state, json.loads(sync.output)]

saved = c.action_executions.create('std.echo', {'output': 'kept'}, save_result=True)
got = saved
for _ in range(400):
    got = c.action_executions.get(saved.id)
    if got.state != 'RUNNING':
        break
    time.sleep(0.05)
report['saved'] = [saved.state, got.state, json.loads(got.output), got.task_execution_id, got.workflow_name]

pending = c.action_executions.create('std.async_noop')
done = c.action_executions.update(pending.id, state='SUCCESS', output='{"v": 1}')
report['async'] = [pending.state, done.state, json.loads(done.output)]

report['list'] = sorted(a.name for a in c.action_executions.list())

try:
    c.action_executions.create('std.nope')
    report['unknown'] = 'created'
except APIException as e:
    report['unknown'] = [e.error_code, e.error_message]

print(json.dumps(report))
