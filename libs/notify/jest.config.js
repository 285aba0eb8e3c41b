module.exports = { ...require('../../jest.preset.js'), displayName: 'notify', rootDir: __dirname };
