module.exports = { ...require('../../jest.preset.js'), displayName: 'expressions', rootDir: __dirname };
