// Root jest config: one jest project per Nx project that has a jest.config.js.
const fs = require('node:fs');
const path = require('node:path');
const projects = [];
for (const group of ['apps', 'libs']) {
  const dir = path.join(__dirname, group);
  if (!fs.existsSync(dir)) continue;
  for (const name of fs.readdirSync(dir).sort()) {
    if (fs.existsSync(path.join(dir, name, 'jest.config.js'))) projects.push(`<rootDir>/${group}/${name}`);
  }
}
// Static checks of docker/ and k8s/ against the apps' configuration (tools/deploy/deploy.spec.ts).
projects.push('<rootDir>/tools/deploy');
// testTimeout is a global setting (ignored inside projects): integration tests start servers.
module.exports = { projects, testTimeout: 90_000 };
