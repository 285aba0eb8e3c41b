module.exports = { ...require('../../jest.preset.js'), displayName: 'actions', rootDir: __dirname };
