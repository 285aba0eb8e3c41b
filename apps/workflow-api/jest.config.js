module.exports = { ...require('../../jest.preset.js'), displayName: 'workflow-api', rootDir: __dirname };
