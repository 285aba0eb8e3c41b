module.exports = { ...require('../../jest.preset.js'), displayName: 'cron', rootDir: __dirname };
