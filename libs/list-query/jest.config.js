module.exports = { ...require('../../jest.preset.js'), displayName: 'list-query', rootDir: __dirname };
