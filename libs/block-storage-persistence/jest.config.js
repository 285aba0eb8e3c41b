module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'block-storage-persistence',
  rootDir: __dirname,
};
