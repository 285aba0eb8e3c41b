/**
 * The standard workflows a Mistral 15 installation registers at `mistral-db-manage populate` (they come
 * from mistral-extra's preinstalled workflows): `create_instance` and `delete_instance`, public system
 * workflows of project `<default-project>` in the default namespace. Names, inputs and task structure
 * follow that release; the text is written here. Their `nova.*` actions (and `std.wait_ssh`) do not
 * exist in this product, so an execution of either fails at its first task with
 * `Failed to find action [action_name=nova.servers_create, namespace=]` (docs/event-triggers.md).
 */
export const SYSTEM_WORKFLOW_PROJECT = '<default-project>';

export const SYSTEM_WORKFLOW_DEFINITIONS: readonly string[] = [
  `---
version: '2.0'

create_instance:
  type: direct

  description: Boot a server with Nova, give it a floating IP and wait until it answers on SSH.

  input:
    - name
    - image_id
    - flavor_id
    - ssh_username: null
    - ssh_password: null
    - key_name: null
    - security_groups: null
    - nics: null

  task-defaults:
    on-error:
      - delete_vm

  output:
    ip: <% $.vm_ip %>
    id: <% $.vm_id %>
    name: <% $.name %>
    status: <% $.status %>

  tasks:
    create_vm:
      action: nova.servers_create name=<% $.name %> image=<% $.image_id %> flavor=<% $.flavor_id %>
      input:
        key_name: <% $.key_name %>
        security_groups: <% $.security_groups %>
        nics: <% $.nics %>
      publish:
        vm_id: <% task(create_vm).result.id %>
      on-success:
        - search_for_ip

    search_for_ip:
      action: nova.floating_ips_findall instance_id=null
      publish:
        vm_ip: <% task(search_for_ip).result[0].ip %>
      on-success:
        - wait_vm_active

    wait_vm_active:
      action: nova.servers_find id=<% $.vm_id %> status="ACTIVE"
      retry:
        count: 10
        delay: 10
      publish:
        status: <% task(wait_vm_active).result.status %>
      on-success:
        - associate_ip

    associate_ip:
      action: nova.servers_add_floating_ip server=<% $.vm_id %> address=<% $.vm_ip %>
      wait-after: 5
      on-success:
        - wait_ssh

    wait_ssh:
      action: std.wait_ssh username=<% $.ssh_username %> password=<% $.ssh_password %> host=<% $.vm_ip %>
      retry:
        count: 10
        delay: 10

    delete_vm:
      workflow: delete_instance instance_id=<% $.vm_id %>
      on-complete:
        - fail
`,
  `---
version: '2.0'

delete_instance:
  type: direct

  description: Delete a Nova server and check that it is gone.

  input:
    - instance_id

  tasks:
    delete_vm:
      action: nova.servers_delete server=<% $.instance_id %>
      wait-after: 10
      on-success:
        - find_given_vm

    find_given_vm:
      action: nova.servers_find id=<% $.instance_id %>
      on-error:
        - succeed
`,
];
