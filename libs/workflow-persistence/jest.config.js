const preset = require('../../jest.preset.js');
const swc = preset.transform['^.+\\.[tj]s$'];

// PGlite's CommonJS build loads Node built-ins with `import()`: compile those calls to `require`
// (as libs/persistence does). Each int-spec boots a database: give tests room.
module.exports = {
  ...preset,
  displayName: 'workflow-persistence',
  rootDir: __dirname,
  testTimeout: 60000,
  transform: { ...preset.transform, '@electric-sql/pglite/dist/.+\\.cjs$': swc },
  transformIgnorePatterns: ['/node_modules/(?!@electric-sql/pglite/)'],
};
