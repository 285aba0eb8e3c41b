// Static checks of docker/ and k8s/ against the apps' configuration (no Docker engine or cluster).
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'deploy',
  rootDir: __dirname,
  testMatch: ['<rootDir>/*.spec.ts'],
};
