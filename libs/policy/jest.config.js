module.exports = { ...require('../../jest.preset.js'), displayName: 'policy', rootDir: __dirname };
