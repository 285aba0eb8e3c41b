// Validates Kubernetes objects against the Kubernetes OpenAPI schemas carried by kubernetes-models
// (an ES module package, so this runs as its own node process; tools/deploy/deploy.spec.ts calls it).
// stdin: a JSON array of objects. stdout: a JSON array, per object null (valid) or the error message.
import { readFileSync } from 'node:fs';

const objects = JSON.parse(readFileSync(0, 'utf8'));
const results = [];
for (const o of objects) {
  try {
    // kubernetes-models exports one module per group version (core: `v1`) with a class per kind.
    const models = await import(`kubernetes-models/${o.apiVersion}`);
    const Model = models[o.kind];
    if (typeof Model !== 'function') throw new Error(`no schema for ${o.apiVersion} ${o.kind}`);
    new Model(o).validate();
    results.push(null);
  } catch (err) {
    results.push(`${o.kind}/${o.metadata?.name}: ${err instanceof Error ? err.message : String(err)}`);
  }
}
process.stdout.write(JSON.stringify(results));
