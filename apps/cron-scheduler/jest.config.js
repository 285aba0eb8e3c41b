module.exports = { ...require('../../jest.preset.js'), displayName: 'cron-scheduler', rootDir: __dirname };
