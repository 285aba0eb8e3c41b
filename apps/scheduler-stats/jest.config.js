module.exports = { ...require('../../jest.preset.js'), displayName: 'scheduler-stats', rootDir: __dirname };
