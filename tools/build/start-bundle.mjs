// `npm start` runs the embedded bundle (dist/apps/embedded/main.js), which starts in about half the
// CPU of the sources through @swc-node/register (issue #17). This prestart step builds the bundle
// only when its inputs changed: a hash of them is kept beside the bundle, so an unchanged checkout
// pays ~20 ms here instead of the ~2.5 s of CPU Nx needs to find its own cache entry. When the hash
// differs, `nx run embedded:build` builds (or restores from Nx's cache) and the hash is written.
// Plain JavaScript run by node: it runs before anything is compiled.
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const outDir = path.join(root, 'dist', 'apps', 'embedded');
const stampFile = path.join(outDir, '.source-hash');

/** Apps and libs the bundle is made of: every app but the console and the e2e suites, every lib. */
const sourceRoots = () => [
  ...readdirSync(path.join(root, 'apps'))
    .filter((a) => a !== 'console' && !a.endsWith('-e2e'))
    .map((a) => path.join(root, 'apps', a, 'src')),
  ...readdirSync(path.join(root, 'libs')).map((l) => path.join(root, 'libs', l, 'src')),
];

/** A hash of the build's inputs (tests excluded), the build script and the installed versions. */
function sourceHash() {
  const h = createHash('sha256');
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const p = path.join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (!/\.(int-)?spec\.ts$/.test(name)) h.update(path.relative(root, p)).update(readFileSync(p));
    }
  };
  for (const dir of sourceRoots()) if (existsSync(dir)) walk(dir);
  for (const file of ['tools/build/bundle.ts', 'tsconfig.base.json', 'package-lock.json', 'package.json']) {
    h.update(file).update(readFileSync(path.join(root, file)));
  }
  return h.digest('hex');
}

const hash = sourceHash();
if (
  existsSync(path.join(outDir, 'main.js')) &&
  existsSync(stampFile) &&
  readFileSync(stampFile, 'utf8') === hash
) {
  process.exit(0);
}
const nxPackage = createRequire(import.meta.url).resolve('nx/package.json');
const nxBin = path.join(path.dirname(nxPackage), JSON.parse(readFileSync(nxPackage, 'utf8')).bin.nx);
const nx = spawnSync(process.execPath, [nxBin, 'run', 'embedded:build', '--output-style=static'], {
  cwd: root,
  stdio: 'inherit',
  env: { NX_DAEMON: 'false', NX_NO_CLOUD: 'true', ...process.env },
});
if (nx.status !== 0) process.exit(nx.status ?? 1);
writeFileSync(stampFile, hash);
