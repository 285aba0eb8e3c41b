import http from 'node:http';
import { Rng } from './rng';

/** One generated request. `route` names the registered route it aims at (`POST /v2/workflows`). */
export interface FuzzRequest {
  readonly route: string;
  readonly method: string;
  /** Path and query string, already encoded as they go on the wire. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string | Buffer;
  /** Send the body chunked (no Content-Length). */
  readonly chunked?: boolean;
  /** What the case varies (`body:mutated`, `query`, `path`, `header:content-type`, ...), for the report. */
  readonly focus: string;
}

export interface FuzzAnswer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  /** The body as text (the first 8 MiB). */
  readonly text: string;
}

export interface FuzzRunOptions {
  readonly baseUrl: string;
  readonly seed: number;
  /** Indexes of the cases to run: `0..n-1` for a run, a few for a replay. */
  readonly cases: readonly number[];
  /** Requests in flight at once, over as many keep-alive connections. */
  readonly concurrency: number;
  readonly generate: (rng: Rng, index: number) => FuzzRequest;
  /** A finding in the answer (a 5xx, a body not in the service's error format), or null. */
  readonly check: (req: FuzzRequest, answer: FuzzAnswer) => string | null;
  /** A request with no answer after this long is a finding (a hang), not a timing assertion. */
  readonly hangAfterMs?: number;
}

export interface FuzzReport {
  readonly sent: number;
  readonly statuses: Readonly<Record<string, number>>;
  /** Cases per route key. */
  readonly perRoute: ReadonlyMap<string, number>;
  /** Cases per focus. */
  readonly perFocus: ReadonlyMap<string, number>;
  /** Every finding, each with the case index that replays it. */
  readonly findings: readonly string[];
  readonly elapsedMs: number;
}

const KEEP = 8 * 1024 * 1024;

const describeCase = (index: number, req: FuzzRequest): string => {
  const body =
    req.body === undefined
      ? ''
      : ` body(${req.body.length})=${JSON.stringify(String(req.body).slice(0, 300))}`;
  const headers = JSON.stringify(req.headers).slice(0, 400);
  return `case ${index} [${req.focus}] ${req.method} ${req.path.slice(0, 300)} headers=${headers}${body}`;
};

/**
 * Sends the generated cases with `concurrency` requests in flight over keep-alive connections and
 * checks every answer. A request that gets no answer (connection reset or closed, socket hang up)
 * is a finding, as is whatever `check` says. The run never stops early: it reports every finding.
 */
export async function runFuzz(opts: FuzzRunOptions): Promise<FuzzReport> {
  const url = new URL(opts.baseUrl);
  const agent = new http.Agent({
    keepAlive: true,
    maxSockets: opts.concurrency,
    maxFreeSockets: opts.concurrency,
  });
  const statuses: Record<string, number> = {};
  const perRoute = new Map<string, number>();
  const perFocus = new Map<string, number>();
  const findings: string[] = [];
  const hangAfter = opts.hangAfterMs ?? 60_000;
  let next = 0;
  let sent = 0;
  const started = Date.now();

  const send = (req: FuzzRequest): Promise<FuzzAnswer> =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string | number> = { ...req.headers };
      if (req.body !== undefined && !req.chunked) headers['content-length'] = Buffer.byteLength(req.body);
      const r = http.request(
        { agent, host: url.hostname, port: url.port, method: req.method, path: req.path, headers },
        (res) => {
          const chunks: Buffer[] = [];
          let kept = 0;
          res.on('data', (c: Buffer) => {
            if (kept < KEEP) chunks.push(c);
            kept += c.length;
          });
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              text: Buffer.concat(chunks).subarray(0, KEEP).toString('utf8'),
            }),
          );
          res.on('error', reject);
        },
      );
      r.setTimeout(hangAfter, () => r.destroy(new Error(`no answer within ${hangAfter} ms`)));
      r.on('error', reject);
      if (req.body !== undefined) r.end(req.body);
      else r.end();
    });

  const worker = async (): Promise<void> => {
    for (;;) {
      const i = next++;
      if (i >= opts.cases.length) return;
      const index = opts.cases[i] as number;
      let req: FuzzRequest;
      try {
        req = opts.generate(new Rng(opts.seed, index), index);
      } catch (err) {
        findings.push(`case ${index}: the generator failed: ${String(err)}`);
        continue;
      }
      perRoute.set(req.route, (perRoute.get(req.route) ?? 0) + 1);
      perFocus.set(req.focus, (perFocus.get(req.focus) ?? 0) + 1);
      sent++;
      let answer: FuzzAnswer;
      try {
        answer = await send(req);
      } catch (err) {
        const e = err as NodeJS.ErrnoException;
        statuses['no answer'] = (statuses['no answer'] ?? 0) + 1;
        findings.push(`${describeCase(index, req)} → no answer (${e.code ?? ''} ${e.message})`);
        continue;
      }
      statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
      const finding = opts.check(req, answer);
      if (finding) findings.push(`${describeCase(index, req)} → ${answer.status}: ${finding}`);
    }
  };

  try {
    await Promise.all(Array.from({ length: opts.concurrency }, () => worker()));
  } finally {
    agent.destroy();
  }
  return { sent, statuses, perRoute, perFocus, findings, elapsedMs: Date.now() - started };
}

/**
 * The case indexes of a run: `FUZZ_CASES=12,345` replays those cases alone, else `0..count-1`.
 * The seed comes from `FUZZ_SEED` (default `defaultSeed`), so a run prints what replays it.
 */
export function fuzzPlan(
  env: Readonly<Record<string, string | undefined>>,
  defaultSeed: number,
  count: number,
): { seed: number; cases: number[]; replay: boolean } {
  const seed = env['FUZZ_SEED'] !== undefined ? Number(env['FUZZ_SEED']) : defaultSeed;
  if (!Number.isInteger(seed)) throw new Error(`FUZZ_SEED must be an integer, not ${env['FUZZ_SEED']}`);
  const only = env['FUZZ_CASES'];
  if (only) return { seed, cases: only.split(',').map((s) => Number(s.trim())), replay: true };
  return { seed, cases: Array.from({ length: count }, (_, i) => i), replay: false };
}
