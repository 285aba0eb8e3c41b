import { CINDER_DEFAULT_POLICY, cinderDeniedMessage } from './cinder-defaults';
import { type PolicyRules, PolicyEnforcer } from './enforcer';
import { MISTRAL_DEFAULT_POLICY, mistralDeniedMessage } from './mistral-defaults';

/** The block-storage enforcer: Cinder's defaults overlaid by a deployment's rules. */
export const cinderPolicy = (overrides: PolicyRules = {}): PolicyEnforcer =>
  new PolicyEnforcer(CINDER_DEFAULT_POLICY, overrides, { deniedMessage: cinderDeniedMessage });

/** The workflow enforcer: Mistral's defaults overlaid by a deployment's rules (`default` as Mistral's fallback). */
export const mistralPolicy = (overrides: PolicyRules = {}): PolicyEnforcer =>
  new PolicyEnforcer(MISTRAL_DEFAULT_POLICY, overrides, {
    deniedMessage: mistralDeniedMessage,
    defaultRule: 'default',
  });
