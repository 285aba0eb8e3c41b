/** Documents used across the suites, including the standard examples of the DSL spec. */

export const DIRECT_WF = `---
version: '2.0'

create_vm:
  description: Simple workflow example
  type: direct
  tags: [vm, example]

  input:
    - vm_name
    - image_ref
    - flavor_ref: m1.small
    - retries: 3
  output:
    vm_id: <% $.vm_id %>

  tasks:
    create_server:
      action: std.echo output=<% $.vm_name %>
      publish:
        vm_id: <% task().result %>
      on-success:
        - wait_for_instance

    wait_for_instance:
      action: std.noop
      retry:
        count: 5
        delay: 1
`;

export const REVERSE_WF = `version: '2.0'

deploy:
  type: reverse
  input:
    - host
  tasks:
    prepare:
      action: std.echo output="prepared <% $.host %>"
    install:
      action: std.echo output=installed
      requires: [prepare]
    verify:
      action: std.noop
      requires:
        - install
`;

export const WORKBOOK = `version: '2.0'
name: my_wb
description: A workbook with actions and workflows
tags: [wb]

actions:
  greet:
    base: std.echo
    base-input:
      output: "Hello <% $.who %>"
    input:
      - who
      - punctuation: "!"
    output: <% $ %>

workflows:
  main:
    type: direct
    input: [who]
    tasks:
      say:
        action: greet who=<% $.who %>
        on-success: finish
      finish:
        workflow: helper
  helper:
    type: reverse
    tasks:
      only:
        action: std.noop
`;

export const TWO_WORKFLOWS = `version: '2.0'
wf_a:
  tasks:
    t1:
      action: std.noop
wf_b:
  input: [x, y: 2]
  tasks:
    t1:
      action: std.echo output=<% $.x %>
`;

export const ACTIONS = `version: '2.0'
concat:
  description: Joins two strings
  base: std.echo
  base-input:
    output: "<% $.left %><% $.right %>"
  input:
    - left
    - right: ''
shout:
  base: std.echo output="HEY"
`;

/** A minimal valid single workflow with a given name. */
export const simpleWorkflow = (name: string, extra = ''): string => `version: '2.0'
${name}:
${extra}  tasks:
    t1:
      action: std.noop
`;

export const simpleAction = (name: string, description = 'an action'): string => `version: '2.0'
${name}:
  description: ${description}
  base: std.noop
`;

export const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
