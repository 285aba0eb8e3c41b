import { readFileSync } from 'node:fs';
import path from 'node:path';

/** Reading docs/grafana/osc-dashboard.json's queries (tools/deploy/metrics-catalogue.spec.ts, the distributed metrics test). */
const ROOT = path.resolve(__dirname, '../..');

const PROMQL_WORDS = new Set([
  'sum',
  'max',
  'min',
  'avg',
  'count',
  'by',
  'without',
  'rate',
  'irate',
  'increase',
  'histogram_quantile',
  'topk',
  'bottomk',
  'and',
  'or',
  'unless',
  'on',
  'ignoring',
  'offset',
  'clamp_min',
  'clamp_max',
  'abs',
  'time',
]);

/** The metric names a PromQL expression reads (label matchers, groupings and ranges removed). */
export function metricsOf(expr: string): string[] {
  const stripped = expr
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, ' ');
  return [...stripped.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)]
    .map((m) => m[0])
    .filter((w) => !PROMQL_WORDS.has(w));
}

export function dashboardExpressions(): string[] {
  const dashboard = JSON.parse(readFileSync(path.join(ROOT, 'docs/grafana/osc-dashboard.json'), 'utf8')) as {
    panels: { targets?: { expr: string }[] }[];
  };
  return dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
}
