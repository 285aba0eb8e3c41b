// PGlite boots a WASM Postgres per test file (about a second from the cached template, more on a
// busy machine): `testTimeout` is global-only in jest, so the project sets it in a setup file.
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'persistence',
  rootDir: __dirname,
  setupFilesAfterEnv: ['<rootDir>/jest.setup.js'],
};
