/**
 * Bench server: volume-api, scheduler-stats and the file back end on one runtime in the given mode
 * (`embedded` or `distributed`), as the e2e suites start them. Prints `READY <port>`.
 */
import { startBlockStorage, type Mode } from '../../apps/volume-api-e2e/test/harness';

const mode = (process.argv[2] ?? 'embedded') as Mode;
startBlockStorage(mode, { LOG_LEVEL: 'warn', VOLUME_BACKEND_CONCURRENCY: '16' })
  .then((bs) => {
    process.stdout.write(`READY ${new URL(bs.base).port}\n`);
    const stop = () => void bs.close().then(() => process.exit(0));
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  })
  .catch((err: unknown) => {
    process.stderr.write(`bench server failed: ${String(err)}\n`);
    process.exit(1);
  });
