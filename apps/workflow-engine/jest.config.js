module.exports = { ...require('../../jest.preset.js'), displayName: 'workflow-engine', rootDir: __dirname };
