// Builds the operator console (apps/console) into dist/console with Vite, when its sources changed.
// `npm start` runs it first (prestart) and the browser tests run it in their setup, so a fresh
// clone needs no extra step. `--force` builds even when the output is up to date.
// Plain ESM JavaScript run by node: Vite is ESM-only and this runs before anything is compiled.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const appDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const root = path.resolve(appDir, '../..');
const outDir = path.join(root, 'dist', 'console');
const stampFile = path.join(outDir, '.source-hash');

/** A hash of every input of the build: the app's sources and the installed versions it bundles. */
function sourceHash() {
  const h = createHash('sha256');
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const p = path.join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (!/\.spec\.tsx?$/.test(name)) h.update(p.slice(appDir.length)).update(readFileSync(p));
    }
  };
  walk(path.join(appDir, 'src'));
  h.update(readFileSync(path.join(appDir, 'index.html')));
  h.update(readFileSync(fileURLToPath(import.meta.url)));
  h.update(readFileSync(path.join(root, 'package-lock.json')));
  return h.digest('hex');
}

const hash = sourceHash();
const force = process.argv.includes('--force');
if (
  !force &&
  existsSync(path.join(outDir, 'index.html')) &&
  existsSync(stampFile) &&
  readFileSync(stampFile, 'utf8') === hash
) {
  process.exit(0);
}
const { build } = await import('vite');
const started = Date.now();
await build({
  root: appDir,
  base: '/console/',
  configFile: false,
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir,
    emptyOutDir: true,
    sourcemap: true,
    chunkSizeWarningLimit: 2000,
    // React Flow marks its module "use client" (for server components): meaningless in a bundle.
    rolldownOptions: { onwarn: (w, warn) => (w.code === 'MODULE_LEVEL_DIRECTIVE' ? undefined : warn(w)) },
  },
});
writeFileSync(stampFile, hash);
console.log(`console built into ${path.relative(root, outDir)} in ${Date.now() - started} ms`);
