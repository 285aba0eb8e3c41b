export * from './context/request-context';
export * from './errors/error-bodies';
export * from './config/config';
export * from './health/metrics';
export * from './bootstrap/http-app';
export * from './auth/auth-config';
export * from './auth/keystone-settings';
export {
  KeystoneAuthenticator,
  type KeystoneAuthenticatorDeps,
  type KeystoneIdentity,
  toIdentity,
} from './auth/keystone-authenticator';
export { KeystoneUnavailableError, identityV3Root, type FetchLike } from './auth/keystone-client';
export { ExpiringCache } from './auth/token-cache';
export { loadPolicyOverrides } from './auth/policy-file';
/** Test double of Keystone v3 (password auth and token validation) for tests of keystone mode; never used by production code. */
export { FakeKeystone } from './auth/fake-keystone';
export { KeystoneProjects } from './auth/keystone-projects';
export * from './logging/json-logger';
