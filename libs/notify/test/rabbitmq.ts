import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';

export const AMQP_URL = process.env['AMQP_URL'] ?? 'amqp://guest:guest@127.0.0.1:5672';

const brokerAnswers = (): boolean => {
  const { hostname, port } = new URL(AMQP_URL);
  const script = `const s=require('net').connect(${Number(port || 5672)},'${hostname}');s.setTimeout(1500);s.on('connect',()=>process.exit(0));s.on('error',()=>process.exit(1));s.on('timeout',()=>process.exit(1));`;
  return spawnSync(process.execPath, ['-e', script], { timeout: 5000 }).status === 0;
};

/** Runs `fn` when RabbitMQ answers; skips otherwise, except under CI=true where the suite fails. */
export function describeWithRabbit(title: string, fn: () => void): void {
  if (brokerAnswers()) {
    describe(title, fn);
  } else if (process.env['CI'] === 'true') {
    describe(title, () => {
      it('needs RabbitMQ', () => {
        throw new Error(`RabbitMQ is not answering at ${AMQP_URL} (CI=true: failing, not skipping)`);
      });
    });
  } else {
    describe.skip(`${title} (RabbitMQ not answering at ${AMQP_URL})`, fn);
  }
}

export const uniqueName = (prefix: string): string =>
  `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
