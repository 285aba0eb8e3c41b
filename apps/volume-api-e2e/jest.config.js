module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'volume-api-e2e',
  rootDir: __dirname,
  testTimeout: 60000,
};
