module.exports = { ...require('../../jest.preset.js'), displayName: 'volume-api', rootDir: __dirname };
