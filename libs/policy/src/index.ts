export { type RuleNode, PolicySyntaxError, parseRule, parseLegacyRule } from './rule';
export {
  type Credentials,
  type Target,
  type PolicyRules,
  type PolicyOptions,
  PolicyEnforcer,
  parsePolicyRules,
} from './enforcer';
export { type PolicySubjectContext, credentialsOf } from './credentials';
export { parsePolicyFile } from './policy-file';
export { CINDER_DEFAULT_POLICY, cinderDeniedMessage } from './cinder-defaults';
export { MISTRAL_DEFAULT_POLICY, mistralDeniedMessage } from './mistral-defaults';
export { cinderPolicy, mistralPolicy } from './service-policies';
