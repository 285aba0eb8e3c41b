"""Drives executions and tasks through python-mistralclient and prints one JSON report.

Usage: /usr/bin/python3 mistralclient_executions.py <base-url>/v2
"""
import json
import sys
import time

from mistralclient.api import base
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
pyclient_fixable:
  tasks:
    flaky:
      action: std.echo output=<% env().get(fixed, false) %>
      fail-on: <% not task().result %>
pyclient_parent:
  tasks:
    call:
      workflow: pyclient_run n=2
pyclient_hold:
  tasks:
    hold:
      action: std.async_noop
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

# a rerun with a new env repairs the failed task and the execution succeeds
fixable = wait(c.executions.create("pyclient_fixable").id)
flaky = c.tasks.list(workflow_execution_id=fixable.id, state="ERROR")[0]
c.tasks.rerun(flaky.id, reset=True, env={"fixed": True})
fixed = wait(fixable.id)
report["rerun_with_env"] = [
    fixable.state,
    flaky.name,
    fixed.state,
    c.tasks.get(flaky.id).state,
    [a.accepted for a in c.action_executions.list(task_execution_id=flaky.id)],
    json.loads(fixed.params)["env"],
]

# sub-executions and the report of a nested execution
parent = wait(c.executions.create("pyclient_parent").id)
call = c.tasks.list(workflow_execution_id=parent.id)[0]
report_body = c.executions.get_report(parent.id, errors_only=False)
report["nested"] = [
    parent.state,
    [e.workflow_name for e in c.executions.get_ex_sub_executions(parent.id)],
    [e.workflow_name for e in c.tasks.get_task_sub_executions(call.id)],
    report_body["statistics"]["total_tasks_count"],
    [t["name"] for t in report_body["root_workflow_execution"]["task_executions"]],
]

# filters on lists
report["filters"] = [
    sorted(e.workflow_name for e in c.executions.list(state="ERROR")),
    [t.name for t in c.tasks.list(workflow_execution_id=failed.id, state="ERROR")],
]

# pause, resume, refused delete, forced delete of a running execution
hold = c.executions.create("pyclient_hold")
for _ in range(600):
    if [t.state for t in c.tasks.list(workflow_execution_id=hold.id)] == ["RUNNING"]:
        break
    time.sleep(0.05)
paused = c.executions.update(hold.id, "PAUSED")
resumed = c.executions.update(hold.id, "RUNNING")
try:
    c.executions.delete(hold.id)
    refused = None
except base.APIException as e:
    refused = e.error_code
c.executions.delete(hold.id, force=True)
report["control"] = [paused.state, resumed.state, refused]

ids = (ex.id, failed.id, fixable.id, parent.id, hold.id)
for i in ids[:-1]:
    c.executions.delete(i)
report["after_delete"] = [e.id for e in c.executions.list() if e.id in ids]
print(json.dumps(report))
