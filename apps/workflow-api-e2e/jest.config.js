const preset = require('../../jest.preset.js');
const swc = preset.transform['^.+\\.[tj]s$'];

// PGlite's CommonJS build loads Node built-ins with `import()`, which jest's CommonJS runtime refuses
// without --experimental-vm-modules: compile those calls to `require` (as libs/persistence does).
module.exports = {
  ...preset,
  displayName: 'workflow-api-e2e',
  rootDir: __dirname,
  testTimeout: 120000,
  transform: { ...preset.transform, '@electric-sql/pglite/dist/.+\\.cjs$': swc },
  transformIgnorePatterns: ['/node_modules/(?!@electric-sql/pglite/)'],
};
