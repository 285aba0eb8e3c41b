// Root ESLint config. Module boundaries (Nx tags) keep domain libs free of frameworks and keep the
// workflow and block-storage sides apart; see ../shared/STYLE.md section 3.
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import prettier from 'eslint-config-prettier';

const NODE_BUILTINS = [
  'fs',
  'node:fs',
  'fs/promises',
  'node:fs/promises',
  'net',
  'node:net',
  'http',
  'node:http',
  'https',
  'node:https',
  'child_process',
  'node:child_process',
  'vm',
  'node:vm',
  'os',
  'node:os',
  'path',
  'node:path',
  'worker_threads',
  'node:worker_threads',
  'dgram',
  'node:dgram',
  'cluster',
  'node:cluster',
];

const DEP_CONSTRAINTS = [
  {
    sourceTag: 'type:domain',
    onlyDependOnLibsWithTags: ['type:domain', 'type:contracts'],
    bannedExternalImports: [
      '@nestjs/*',
      'typeorm',
      'amqplib',
      'amqp-connection-manager',
      'bullmq',
      'ioredis',
      'fastify',
      'pg',
      '@electric-sql/*',
    ],
  },
  {
    sourceTag: 'type:contracts',
    onlyDependOnLibsWithTags: ['type:contracts', 'type:domain'],
    bannedExternalImports: ['@nestjs/*', 'typeorm'],
  },
  { sourceTag: 'type:adapter', onlyDependOnLibsWithTags: ['type:adapter', 'type:domain', 'type:contracts'] },
  { sourceTag: 'type:app', notDependOnLibsWithTags: ['type:app', 'type:e2e', 'type:launcher'] },
  { sourceTag: 'type:launcher', notDependOnLibsWithTags: ['type:e2e', 'type:launcher'] },
  { sourceTag: 'scope:workflow', notDependOnLibsWithTags: ['scope:block-storage'] },
  { sourceTag: 'scope:block-storage', notDependOnLibsWithTags: ['scope:workflow'] },
  { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared'] },
  // The cron-scheduler fires both sides' schedules (workflow cron triggers, block-storage backup
  // policies) with one exactly-once discipline; it alone may read both sides' libraries.
  {
    sourceTag: 'scope:scheduler',
    onlyDependOnLibsWithTags: ['scope:workflow', 'scope:block-storage', 'scope:shared'],
  },
];

/** The apps' public entry points (start functions); only the embedded launcher may import them. */
const APP_ENTRY_POINTS = [
  'workflow-api',
  'workflow-engine',
  'cron-scheduler',
  'volume-api',
  'scheduler-stats',
  'backup-worker',
].map((a) => `@osc/${a}`);

export default [
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      'data/**',
      'tmp/**',
      '.nx/**',
      'coverage/**',
      '**/*.js',
      '**/*.mjs',
      '**/*.cjs',
    ],
  },
  ...nx.configs['flat/base'],
  ...nx.configs['flat/typescript'],
  {
    // .tsx: the operator console (apps/console, its own tsconfig with JSX and the DOM).
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'import-x': importX },
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        { enforceBuildableLibDependency: false, allow: [], depConstraints: DEP_CONSTRAINTS },
      ],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: { arguments: false, attributes: false } },
      ],
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
      'import-x/no-cycle': ['error', { maxDepth: 4 }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      curly: ['error', 'multi-line'],
    },
  },
  {
    // The launcher runs the six apps in one process: it alone imports their entry points.
    files: ['apps/embedded/**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        { enforceBuildableLibDependency: false, allow: APP_ENTRY_POINTS, depConstraints: DEP_CONSTRAINTS },
      ],
    },
  },
  {
    // NestJS resolves constructor parameters from emitted metadata: type-only imports would break DI.
    files: ['apps/**/*.ts', 'libs/http-common/**/*.ts', 'libs/persistence/**/*.ts', 'libs/messaging/**/*.ts'],
    rules: { '@typescript-eslint/consistent-type-imports': 'off' },
  },
  {
    files: [
      'libs/errors/**/*.ts',
      'libs/cron/**/*.ts',
      'libs/list-query/**/*.ts',
      'libs/expressions/**/*.ts',
      'libs/workflow-domain/**/*.ts',
      'libs/block-storage-domain/**/*.ts',
      'libs/contracts/**/*.ts',
    ],
    ignores: ['**/*.spec.ts', '**/*.int-spec.ts', '**/test/**', '**/tools/**'],
    rules: {
      'no-restricted-imports': ['error', { paths: NODE_BUILTINS }],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'Domain code takes configuration as arguments.' },
      ],
    },
  },
  {
    files: ['**/*.spec.ts', '**/*.int-spec.ts', '**/test/**/*.ts', 'bench/**/*.ts', 'tools/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-empty-function': 'off',
      '@nx/enforce-module-boundaries': 'off',
    },
  },
  prettier,
];
