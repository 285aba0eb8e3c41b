import { AsyncLocalStorage } from 'node:async_hooks';
import { EventEmitter } from 'node:events';
import { type PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import { InternalError, TransientError } from '@osc/errors';
import pg from 'pg';
import { closePglite } from './pglite-instance';

/**
 * A `pg`-compatible driver module over one PGlite instance, handed to TypeORM's postgres driver
 * through its `driver` option, so both engines share one SQL dialect, one set of type parsers
 * (the real `pg` client speaks the wire protocol to PGlite) and one TypeORM driver.
 *
 * PGlite has exactly one database session. The pool below lends that session to one borrower
 * at a time: `connect()` takes a FIFO mutex that is held until `release()`. TypeORM borrows for
 * the whole life of a query runner, so a transaction owns the session from BEGIN to COMMIT and
 * other transactions queue behind it. That is what gives real isolation, real rollbacks and
 * correct `FOR UPDATE SKIP LOCKED` claims (every claimer runs after the previous one committed).
 *
 * Consequence (STACK.md trap 4): while a transaction holds the session, any query that asks the
 * data source for another connection (e.g. `dataSource.manager` instead of the transaction's
 * EntityManager) waits for a session that will never be released. Inside
 * {@link runInTransaction} that mistake is detected and raised as an error; elsewhere it ends
 * with the acquire timeout.
 */
export interface PgliteDriverOptions {
  /** Close the PGlite instance when the pool ends (the data source owns it). Default true. */
  readonly ownsPglite?: boolean;
  /** How long a borrower may wait for the session before failing. Default 60 s. */
  readonly acquireTimeoutMs?: number;
}

type ConnectCallback = (
  err: Error | undefined,
  client?: pg.Client,
  release?: (err?: unknown) => void,
) => void;

interface Waiter {
  readonly grant: () => void;
  readonly fail: (err: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/** Marks the async context of a {@link runInTransaction} callback that holds a PGlite session. */
export const sessionScope = new AsyncLocalStorage<{ readonly pool: PglitePool; active: boolean }>();

/** The `pg` clients that speak to an embedded PGlite session (see {@link isEmbeddedSession}). */
const embeddedClients = new WeakSet<object>();

/** Whether a connection is the embedded engine's PGlite session rather than a PostgreSQL server's. */
export const isEmbeddedSession = (client: object): boolean => embeddedClients.has(client);

export class PglitePool extends EventEmitter {
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  private held = false;
  private readonly waiters: Waiter[] = [];
  private txStatus = 'I';
  private ended = false;

  constructor(
    private readonly pglite: PGlite,
    private readonly options: PgliteDriverOptions,
  ) {
    super();
  }

  get totalCount(): number {
    return this.client ? 1 : 0;
  }
  get idleCount(): number {
    return this.client && !this.held ? 1 : 0;
  }
  get waitingCount(): number {
    return this.waiters.length;
  }

  /** pg-pool's `connect`: callback style (what TypeORM uses) or promise style. */
  connect(callback?: ConnectCallback): Promise<pg.Client> | undefined {
    const leased = this.lease();
    if (!callback) return leased.then(([client]) => client);
    leased.then(
      ([client, release]) => callback(undefined, client, release),
      (err: unknown) => callback(err instanceof Error ? err : new Error(String(err))),
    );
    return undefined;
  }

  end(callback?: (err?: Error) => void): Promise<void> | undefined {
    const done = this.shutdown();
    if (!callback) return done;
    done.then(
      () => callback(),
      (err: unknown) => callback(err instanceof Error ? err : new Error(String(err))),
    );
    return undefined;
  }

  private async lease(): Promise<[pg.Client, (err?: unknown) => void]> {
    if (this.ended) throw new TransientError('The embedded database is closed');
    const scope = sessionScope.getStore();
    if (scope?.active && scope.pool === this) {
      throw new InternalError(
        'A query asked for a second database session inside a transaction on the embedded engine; ' +
          "use the transaction's EntityManager for every query inside runInTransaction",
      );
    }
    await this.acquire();
    try {
      const client = await this.ensureClient();
      let released = false;
      const release = (): void => {
        if (released) return;
        released = true;
        void this.giveBack(client);
      };
      return [client, release];
    } catch (err) {
      this.handOver();
      throw err;
    }
  }

  private acquire(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve();
    }
    const timeoutMs = this.options.acquireTimeoutMs ?? 60_000;
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          clearTimeout(waiter.timer);
          resolve();
        },
        fail: (err) => {
          clearTimeout(waiter.timer);
          reject(err);
        },
        timer: setTimeout(() => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(
            new TransientError(
              `The embedded database session stayed busy for ${timeoutMs} ms ` +
                "(a query outside its transaction's EntityManager waits forever)",
            ),
          );
        }, timeoutMs),
      };
      this.waiters.push(waiter);
    });
  }

  /** Passes the session to the next waiter, or marks it free. */
  private handOver(): void {
    const next = this.waiters.shift();
    if (next) next.grant();
    else this.held = false;
  }

  /** A borrower that leaves a transaction open (crash, lost COMMIT) must not leak it to the next one. */
  private async giveBack(client: pg.Client): Promise<void> {
    if (this.txStatus !== 'I') {
      try {
        await client.query('ROLLBACK');
      } catch (err) {
        this.emit('error', err);
      }
    }
    this.handOver();
  }

  private ensureClient(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= (async () => {
      const { connection } = createPgConfig(this.pglite);
      connection.on('readyForQuery', (msg?: { status?: string }) => {
        this.txStatus = msg?.status ?? 'I';
      });
      const client = new pg.Client({ connection } as pg.ClientConfig);
      embeddedClients.add(client);
      client.on('error', (err) => this.emit('error', err));
      await client.connect();
      this.client = client;
      return client;
    })().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async shutdown(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    for (const w of this.waiters.splice(0)) {
      w.fail(new TransientError('The embedded database is closed'));
    }
    const client = this.client;
    this.client = undefined;
    if (client) await client.end().catch(() => undefined);
    if (this.options.ownsPglite ?? true) await closePglite(this.pglite);
  }
}

/** The object passed as TypeORM's postgres `driver` option: a `pg`-like module with one Pool. */
export interface PgliteDriverModule {
  readonly Pool: new (options?: unknown) => PglitePool;
  readonly defaults: typeof pg.defaults;
  readonly types: typeof pg.types;
}

export function createPgliteDriver(pglite: PGlite, options: PgliteDriverOptions = {}): PgliteDriverModule {
  class BoundPglitePool extends PglitePool {
    constructor() {
      super(pglite, options);
    }
  }
  return { Pool: BoundPglitePool, defaults: pg.defaults, types: pg.types };
}
