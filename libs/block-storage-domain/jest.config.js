module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'block-storage-domain',
  rootDir: __dirname,
};
