const preset = require('../../jest.preset.js');
const swc = preset.transform['^.+\\.[tj]s$'];

// The outbox suite also runs on PGlite, whose CommonJS build loads Node built-ins with `import()`:
// jest's CommonJS runtime refuses that without --experimental-vm-modules, so those files are
// compiled too (as libs/persistence does).
module.exports = {
  ...preset,
  displayName: 'messaging',
  rootDir: __dirname,
  transform: { ...preset.transform, '@electric-sql/pglite/dist/.+\\.cjs$': swc },
  transformIgnorePatterns: ['/node_modules/(?!@electric-sql/pglite/)'],
};
