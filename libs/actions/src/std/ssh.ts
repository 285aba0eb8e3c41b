import { ActionException, type ActionImplementation } from '../action';

const unavailable = (name: string, className: string): ActionImplementation => ({
  name,
  className,
  run: () =>
    Promise.reject(
      new ActionException(`Action ${name} is not available: SSH actions are disabled in this deployment.`),
    ),
});

/**
 * std.ssh, std.ssh_proxied and std.wait_ssh exist with the reference parameter lists (their input is
 * validated like any action's) but are disabled, as DSL-17.6 allows: running one fails the action.
 */
export const sshActions: readonly ActionImplementation[] = [
  unavailable('std.ssh', 'mistral.actions.std_actions.SSHAction'),
  unavailable('std.ssh_proxied', 'mistral.actions.std_actions.SSHProxiedAction'),
  unavailable('std.wait_ssh', 'mistral.actions.adhoc.AdHocAction'),
];
