/**
 * Bundles one app into `dist/apps/<app>/main.js` with its production dependency list
 * (`dist/apps/<app>/package.json`): `node -r @swc-node/register tools/build/bundle.ts <app>`,
 * normally through `nx run <app>:build` (cached by Nx).
 *
 * esbuild resolves and bundles our own code (the `@osc/*` path aliases of tsconfig.base.json) and
 * leaves every npm package external, so the bundle needs the packages listed in its package.json
 * (their versions are the root package.json's, the lockfile decides the rest). TypeScript is
 * turned into JavaScript by @swc/core, file by file, not by esbuild: NestJS constructor injection
 * without `@Inject` tokens and TypeORM's column types read the `design:paramtypes`/`design:type`
 * metadata that `emitDecoratorMetadata` emits, and esbuild cannot emit it. The swc options are the
 * ones `@swc-node/register` derives from tsconfig.base.json, so the bundle runs the same code as
 * `npm start` does from source.
 */
import { build, type Plugin } from 'esbuild';
import { transform } from '@swc/core';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
export const APPS = [
  'workflow-api',
  'workflow-engine',
  'cron-scheduler',
  'volume-api',
  'scheduler-stats',
  'backup-worker',
  'embedded',
] as const;

/**
 * Files loaded at run time by path instead of by import, next to the module that loads them; they
 * go next to the bundle (its `__dirname`), with the packages they require themselves.
 */
const RUNTIME_FILES: readonly { whenBundled: string; file: string; packages: readonly string[] }[] = [
  {
    whenBundled: 'libs/actions/src/std/javascript-sandbox.ts',
    file: 'libs/actions/src/std/quickjs-worker.js',
    packages: ['quickjs-emscripten-core', '@jitl/quickjs-wasmfile-release-sync'],
  },
  {
    // backup-worker's worker threads (hashing, compression); it requires zstd by the path it is handed.
    whenBundled: 'apps/backup-worker/src/backups/chunk-workers.ts',
    file: 'apps/backup-worker/src/backups/chunk-worker.js',
    packages: ['@mongodb-js/zstd'],
  },
];

/** TypeScript through swc with decorator metadata, as @swc-node/register compiles it. */
const swcTypeScript: Plugin = {
  name: 'swc-typescript',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const source = readFileSync(args.path, 'utf8');
      const out = await transform(source, {
        filename: args.path,
        sourceMaps: 'inline',
        swcrc: false,
        jsc: {
          parser: { syntax: 'typescript', decorators: true, dynamicImport: true },
          transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: true },
          target: 'es2022',
          keepClassNames: true,
        },
        module: { type: 'es6' },
      });
      return { contents: out.code, loader: 'js', resolveDir: path.dirname(args.path) };
    });
  },
};

/**
 * Packages kept out of the bundle and installed beside it (the image's production dependencies).
 * Everything else from npm is bundled: loading ~2,000 files from node_modules was most of the
 * start time. These stay external because they load files by path at run time (bullmq's Lua
 * scripts, pino's transport workers, PGlite's WASM and data, QuickJS's WASM), load their own
 * drivers by name (typeorm loads `pg`), or must be one instance shared with an external package
 * (ioredis with bullmq, pg with typeorm, the OpenTelemetry API's global registry).
 */
const EXTERNAL = [
  'pg',
  'bullmq',
  'ioredis',
  'pino',
  '@electric-sql/pglite',
  'quickjs-emscripten-core',
  '@jitl/quickjs-wasmfile-release-sync',
  '@opentelemetry/*',
] as const;

/**
 * Optional packages that frameworks require only when present (NestJS's `@nestjs/microservices`,
 * `class-validator`, …) are not installed: they stay external requires that fail at run time
 * exactly as they do from source, where the framework catches the failure.
 */
const optionalPackages: Plugin = {
  name: 'optional-packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:') || args.path.startsWith('@osc/')) return undefined;
      try {
        require.resolve(args.path, { paths: [args.resolveDir || ROOT] });
        return undefined;
      } catch {
        return { path: args.path, external: true };
      }
    });
  },
};

/**
 * The bundle with every non-ASCII character written as a `\\uXXXX` escape. V8 keeps a script's
 * source for the life of the process, in one byte per character only when every character fits
 * in Latin-1: a single em dash in a comment made the embedded bundle's 12.8 MB source a 25.6 MB
 * two-byte string (issue #17, idle RSS). esbuild escapes string literals itself but leaves
 * comments and some regular expression literals as they are; there the escape means the same
 * character (comments don't matter, and `\\uXXXX` matches that code unit in a regular
 * expression, surrogate pairs included). Only a tagged template reading its raw text would see a
 * difference; the bundles' non-ASCII template text is all in comments.
 */
export function asciiOnly(code: string): string {
  return code.replace(/[\u0080-\uffff]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The npm package an import names (`@scope/name/sub` → `@scope/name`), or undefined for node: and relative paths. */
export function packageOf(specifier: string): string | undefined {
  if (/^[./<]|^node:/.test(specifier)) return undefined;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  if (!name || BUILTINS.has(name)) return undefined;
  return name;
}
const BUILTINS = new Set(require('node:module').builtinModules as string[]);

const isExternal = (pkg: string): boolean =>
  EXTERNAL.some((e) => (e.endsWith('/*') ? pkg.startsWith(e.slice(0, -1)) : pkg === e));

export async function bundle(app: string): Promise<{ outDir: string; dependencies: Record<string, string> }> {
  const outDir = path.join(ROOT, 'dist/apps', app);
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: [path.join(ROOT, 'apps', app, 'src/main.ts')],
    outfile: path.join(outDir, 'main.js'),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    external: [...EXTERNAL],
    tsconfig: path.join(ROOT, 'tsconfig.base.json'),
    sourcemap: 'linked',
    sourcesContent: false,
    keepNames: true,
    metafile: true,
    logLevel: 'warning',
    plugins: [swcTypeScript, optionalPackages],
  });
  const main = path.join(outDir, 'main.js');
  writeFileSync(main, asciiOnly(readFileSync(main, 'utf8')));
  const root = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    version: string;
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  const needed = new Set<string>();
  const inputs = new Set(Object.keys(result.metafile.inputs));
  for (const input of Object.values(result.metafile.inputs)) {
    for (const imp of input.imports)
      if (imp.external) {
        const pkg = packageOf(imp.path);
        if (pkg && isExternal(pkg)) needed.add(pkg);
      }
  }
  for (const extra of RUNTIME_FILES) {
    if (!inputs.has(extra.whenBundled)) continue;
    copyFileSync(path.join(ROOT, extra.file), path.join(outDir, path.basename(extra.file)));
    for (const p of extra.packages) needed.add(p);
  }
  const dependencies: Record<string, string> = {};
  const missing: string[] = [];
  for (const pkg of [...needed].sort()) {
    const version = root.dependencies[pkg];
    if (version) dependencies[pkg] = version;
    else missing.push(pkg);
  }
  if (missing.length > 0) {
    // A bundle that imports a devDependency (or an undeclared package) would fail in the image,
    // which installs production dependencies only.
    throw new Error(`${app} imports packages that are not production dependencies: ${missing.join(', ')}`);
  }
  writeFileSync(
    path.join(outDir, 'package.json'),
    `${JSON.stringify({ name: `@osc/${app}`, version: root.version, private: true, main: 'main.js', dependencies }, null, 2)}\n`,
  );
  return { outDir, dependencies };
}

if (require.main === module) {
  const apps = process.argv.slice(2);
  const unknown = apps.filter((a) => !(APPS as readonly string[]).includes(a));
  if (apps.length === 0 || unknown.length > 0) {
    process.stderr.write(`usage: bundle.ts <app>..., one of ${APPS.join(' ')}\n`);
    process.exit(64);
  }
  (async () => {
    for (const app of apps) {
      const { dependencies } = await bundle(app);
      process.stdout.write(`dist/apps/${app}/main.js (${Object.keys(dependencies).length} packages)\n`);
    }
  })().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
