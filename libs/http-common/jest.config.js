module.exports = { ...require('../../jest.preset.js'), displayName: 'http-common', rootDir: __dirname };
