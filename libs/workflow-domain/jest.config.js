module.exports = { ...require('../../jest.preset.js'), displayName: 'workflow-domain', rootDir: __dirname };
