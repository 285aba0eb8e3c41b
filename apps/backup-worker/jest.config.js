module.exports = { ...require('../../jest.preset.js'), displayName: 'backup-worker', rootDir: __dirname };
