module.exports = { ...require('../../jest.preset.js'), displayName: 'workflow-persistence', rootDir: __dirname };
