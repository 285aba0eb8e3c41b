"""Drives python-mistralclient against a running workflow-api and prints one JSON report.

Usage: /usr/bin/python3 mistralclient_check.py <base-url>/v2
"""
import json
import sys

from mistralclient.api import client

WF = """version: '2.0'
pyclient_wf:
  input: [name, greeting: hello]
  tasks:
    hello:
      action: std.echo output=<% $.greeting %>
"""

WF2 = WF.replace("greeting: hello", "greeting: bye")

WB = """version: '2.0'
name: pyclient_wb
workflows:
  inner:
    tasks:
      t:
        action: std.noop
actions:
  helper:
    base: std.echo output=1
"""

ACTION = """version: '2.0'
pyclient_action:
  description: made by the client
  input: [x]
  base: std.echo output=<% $.x %>
"""

report = {}
c = client.client(mistral_url=sys.argv[1])

created = c.workflows.create(WF)
report["wf_create"] = [(w.name, w.input) for w in created]
report["wf_list"] = sorted(w.name for w in c.workflows.list())
got = c.workflows.get("pyclient_wf")
report["wf_get"] = {"name": got.name, "input": got.input, "interface": got.interface, "scope": got.scope}
report["wf_update"] = [w.input for w in c.workflows.update(WF2)]
report["wf_update_id"] = c.workflows.update(WF, id=got.id).input
report["wf_list_limit"] = [w.name for w in c.workflows.list(limit=1, sort_keys="name", sort_dirs="desc")]
c.workflows.delete("pyclient_wf")
report["wf_after_delete"] = [w.name for w in c.workflows.list()]

wb = c.workbooks.create(WB)
report["wb_create"] = wb.name
report["wb_list"] = [w.name for w in c.workbooks.list()]
report["wb_get"] = c.workbooks.get("pyclient_wb").definition == WB
report["wb_update"] = c.workbooks.update(WB.replace("output=1", "output=2")).name
report["wb_member"] = c.workflows.get("pyclient_wb.inner").name
c.workbooks.delete("pyclient_wb")
report["wb_after_delete"] = [w.name for w in c.workbooks.list()]

act = c.actions.create(ACTION)
report["action_create"] = [(a.name, a.input, a.description) for a in act]
report["action_get"] = c.actions.get("pyclient_action").is_system
report["action_update"] = [a.description for a in c.actions.update(ACTION.replace("made by", "changed by"))]
names = [a.name for a in c.actions.list()]
report["action_list_has_std_echo"] = "std.echo" in names
report["action_list_has_own"] = "pyclient_action" in names
c.actions.delete("pyclient_action")
report["action_after_delete"] = "pyclient_action" in [a.name for a in c.actions.list()]

try:
    c.workflows.get("does_not_exist")
    report["error"] = "no error"
except Exception as e:  # the client raises APIException with the faultstring
    report["error"] = [getattr(e, "error_code", None), getattr(e, "error_message", str(e))]

print(json.dumps(report))
