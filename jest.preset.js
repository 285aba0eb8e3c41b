// Shared jest settings for every project: SWC transform (with decorator metadata for NestJS)
// and the tsconfig path aliases mapped to sources.
const path = require('node:path');
const { compilerOptions } = require('./tsconfig.base.json');

const moduleNameMapper = {};
for (const [alias, [target]] of Object.entries(compilerOptions.paths)) {
  moduleNameMapper[`^${alias.replace('/', '\\/')}$`] = path.join(__dirname, target);
}

const swc = [
  '@swc/jest',
  {
    jsc: {
      target: 'es2022',
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
    },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  },
];

module.exports = {
  testEnvironment: 'node',
  // Integration tests start real servers and databases; unit tests finish far below this.
  testTimeout: 90_000,
  transform: {
    '^.+\\.[tj]s$': swc,
    // PGlite's CommonJS build loads Node built-ins with `import()`, which jest's CommonJS runtime
    // rejects without --experimental-vm-modules: SWC compiles those calls to `require`.
    '@electric-sql/pglite/dist/.+\\.cjs$': swc,
  },
  transformIgnorePatterns: ['/node_modules/(?!@electric-sql/pglite/)'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper,
  testMatch: [
    '<rootDir>/src/**/*.spec.ts',
    '<rootDir>/src/**/*.int-spec.ts',
    '<rootDir>/test/**/*.spec.ts',
    '<rootDir>/test/**/*.int-spec.ts',
  ],
};
