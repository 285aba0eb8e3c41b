import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** One Prometheus registry per app, with process metrics and HTTP request timings. */
export class AppMetrics {
  readonly registry = new Registry();
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  readonly httpErrors: Counter<'status'>;

  constructor(readonly app: string) {
    this.registry.setDefaultLabels({ app });
    collectDefaultMetrics({ register: this.registry });
    this.httpDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by route and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [this.registry],
    });
    this.httpErrors = new Counter({
      name: 'http_errors_total',
      help: 'HTTP responses with status >= 500',
      labelNames: ['status'],
      registers: [this.registry],
    });
  }
}

/** A named readiness check; resolves true when the dependency answers. */
export interface ReadinessCheck {
  name: string;
  check(): Promise<boolean>;
}

export async function runReadiness(
  checks: readonly ReadinessCheck[],
  timeoutMs = 2000,
): Promise<{ ok: boolean; checks: Record<string, string> }> {
  const results = await Promise.all(
    checks.map(async (c) => {
      let timer: NodeJS.Timeout | undefined;
      try {
        const ok = await Promise.race([
          c.check(),
          new Promise<boolean>((resolve) => {
            timer = setTimeout(() => resolve(false), timeoutMs);
          }),
        ]);
        return [c.name, ok ? 'ok' : 'failing'] as const;
      } catch {
        return [c.name, 'failing'] as const;
      } finally {
        if (timer) clearTimeout(timer);
      }
    }),
  );
  return { ok: results.every(([, s]) => s === 'ok'), checks: Object.fromEntries(results) };
}
