import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the product's std.http actions made, as this server saw it. */
export interface ReceivedCall {
  /** `<workflow execution id>/<task name>/<item index>` (item 0 for a task without with-items). */
  readonly key: string;
  readonly flaky: boolean;
  readonly at: number;
  readonly status: number;
}

/**
 * The target of every std.http action of the chaos load. The workflows put the execution id, the
 * task name and the with-items index in the path (`/call/<ex>/<task>/<item>`), so each call is
 * attributed to one (execution, task, item) without trusting anything the load generator believes.
 * `/flaky/…` answers 503 to the first `flakyFailures` calls of a key, then 200: the retry policy of
 * the task must carry it through.
 */
export class CountingServer {
  private readonly received: ReceivedCall[] = [];
  private readonly perKey = new Map<string, number>();
  private server: Server | null = null;

  constructor(private readonly options: { delayMs: number; flakyFailures: number }) {}

  /** Listens on a free loopback port; resolves to the base URL. */
  async start(): Promise<string> {
    const server = createServer((req, res) => {
      const m = /^\/(call|flaky)\/([0-9a-f-]{36})\/([A-Za-z0-9_-]+)\/(\d+)$/.exec(req.url ?? '');
      if (!m) {
        res.writeHead(404).end();
        return;
      }
      const key = `${m[2]}/${m[3]}/${m[4]}`;
      const flaky = m[1] === 'flaky';
      const seen = this.perKey.get(key) ?? 0;
      this.perKey.set(key, seen + 1);
      const status = flaky && seen < this.options.flakyFailures ? 503 : 200;
      this.received.push({ key, flaky, at: Date.now(), status });
      // Answer after a pause: a kill then often lands while the action is in flight.
      setTimeout(() => {
        res
          .writeHead(status, { 'content-type': 'application/json' })
          .end(JSON.stringify({ key, n: seen + 1 }));
      }, this.options.delayMs);
    });
    server.keepAliveTimeout = 1000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  calls(): readonly ReceivedCall[] {
    return this.received;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
