"""Drives executions and tasks through python-mistralclient and prints one JSON report.

Usage: /usr/bin/python3 mistralclient_executions.py <base-url>/v2
"""
import json
import sys
import time

from mistralclient.api import client

WF = """version: '2.0'
pyclient_run:
  input: [n]
  output:
    doubled: <% $.d %>
  tasks:
    double:
      action: std.echo output=<% $.n * 2 %>
      publish: {d: <% task().result %>}
pyclient_fail:
  tasks:
    boom:
      action: std.fail
"""

c = client.client(mistral_url=sys.argv[1])
report = {}


def wait(ex_id, states=("SUCCESS", "ERROR", "CANCELLED")):
    for _ in range(600):
        ex = c.executions.get(ex_id)
        if ex.state in states:
            return ex
        time.sleep(0.05)
    raise RuntimeError("execution %s stayed %s" % (ex_id, ex.state))


c.workflows.create(WF)
ex = c.executions.create("pyclient_run", workflow_input={"n": 21}, description="from python")
report["create"] = [ex.state, ex.workflow_name, json.loads(ex.input), ex.description]
done = wait(ex.id)
report["get"] = [done.state, json.loads(done.output)]
listed = c.executions.list(workflow_name="pyclient_run")
report["list"] = [e.id == ex.id for e in listed]
tasks = c.tasks.list(workflow_execution_id=ex.id)
report["tasks"] = [(t.name, t.state) for t in tasks]
task = c.tasks.get(tasks[0].id)
report["task_get"] = [task.name, json.loads(task.result), json.loads(task.published)]

failed = c.executions.create("pyclient_fail")
failed = wait(failed.id)
report["failed"] = failed.state
boom = c.tasks.list(workflow_execution_id=failed.id)[0]
rerun = c.tasks.rerun(boom.id, reset=True)
report["rerun"] = rerun.name
again = wait(failed.id)
report["after_rerun"] = [again.state, len(c.action_executions.list(task_execution_id=boom.id))]

c.executions.delete(ex.id)
c.executions.delete(failed.id)
report["after_delete"] = [e.id for e in c.executions.list() if e.id in (ex.id, failed.id)]
print(json.dumps(report))
