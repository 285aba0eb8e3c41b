// Tests against a real Keystone (Debian package `keystone`), started by the tests themselves via
// start.sh. Not part of the root jest projects (CI): run with `npx jest -c tools/keystone/jest.config.js`.
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'keystone-real',
  rootDir: __dirname,
  testTimeout: 120_000,
};
