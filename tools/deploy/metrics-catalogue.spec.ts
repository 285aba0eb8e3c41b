import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Registry } from 'prom-client';
import { AppMetrics } from '@osc/http-common';
import { productRegistry } from '@osc/telemetry';
import { dashboardExpressions, metricsOf } from './dashboard';

/**
 * The Grafana dashboard (docs/grafana/osc-dashboard.json) queries only metrics the apps expose, and
 * docs/metrics.md documents every metric of the product's own registry. The names come from the
 * registries themselves; apps/embedded/test/distributed-metrics.int-spec.ts checks the same
 * dashboard against what running apps actually serve.
 */
const ROOT = path.resolve(__dirname, '../..');

/** Series names a registry exposes: a histogram is `_bucket`, `_sum` and `_count`, a summary `_sum`, `_count` and itself. */
async function seriesNames(registry: Registry): Promise<Set<string>> {
  const names = new Set<string>();
  for (const m of await registry.getMetricsAsJSON()) {
    const type = String(m.type);
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(m.name + s);
    else if (type === 'summary') for (const s of ['', '_sum', '_count']) names.add(m.name + s);
    else names.add(m.name);
  }
  return names;
}

describe('metrics catalogue and dashboard', () => {
  it('the expression parser finds metric names and nothing else', () => {
    expect(
      metricsOf(
        'histogram_quantile(0.95, sum by (le, route) (rate(http_request_duration_seconds_bucket{route!~"/a|/b"}[5m])))',
      ),
    ).toEqual(['http_request_duration_seconds_bucket']);
    expect(
      metricsOf('sum by (app) (process_resident_memory_bytes) / max(osc_queue_depth{kind="job"})'),
    ).toEqual(['process_resident_memory_bytes', 'osc_queue_depth']);
  });

  it('every query of the Grafana dashboard reads metrics the apps expose', async () => {
    const exposed = new Set([
      ...(await seriesNames(new AppMetrics('any').registry)),
      ...(await seriesNames(productRegistry)),
    ]);
    const exprs = dashboardExpressions();
    expect(exprs.length).toBeGreaterThan(15);
    const unknown = exprs.flatMap((e) =>
      metricsOf(e)
        .filter((n) => !exposed.has(n))
        .map((n) => `${n} in ${e}`),
    );
    expect(unknown).toEqual([]);
    // Each product metric is on the dashboard.
    const used = new Set(exprs.flatMap(metricsOf).map((n) => n.replace(/_(bucket|sum|count)$/, '')));
    const product = (await productRegistry.getMetricsAsJSON()).map((m) => m.name);
    expect(product.filter((n) => !used.has(n))).toEqual([]);
  });

  it('docs/metrics.md documents every metric the product registers, with its labels', async () => {
    const doc = readFileSync(path.join(ROOT, 'docs/metrics.md'), 'utf8');
    const app = new AppMetrics('any').registry;
    const metrics = [
      ...(await app.getMetricsAsJSON()).filter((m) => m.name.startsWith('http_')),
      ...(await productRegistry.getMetricsAsJSON()),
    ];
    const rows = new Map(
      [...doc.matchAll(/^\|\s*`([a-z_]+)`\s*\|\s*(\w+)\s*\|\s*([^|]*)\|/gm)].map((m) => [
        m[1]!,
        { type: m[2]!, labels: m[3]! },
      ]),
    );
    for (const m of metrics) {
      const row = rows.get(m.name);
      expect(`${m.name}: ${row ? row.type : 'undocumented'}`).toBe(`${m.name}: ${String(m.type)}`);
      const labels = [...row!.labels.matchAll(/`(\w+)`/g)].map((x) => x[1]).sort();
      const metric = productRegistry.getSingleMetric(m.name) ?? app.getSingleMetric(m.name);
      const registered = [...((metric as unknown as { labelNames?: string[] }).labelNames ?? [])].sort();
      expect(`${m.name}: ${labels.join(',')}`).toBe(`${m.name}: ${registered.join(',')}`);
    }
  });
});
