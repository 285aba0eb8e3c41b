import { describeWithServer } from '@osc/testing';
import { randomBytes } from 'node:crypto';

export const AMQP_URL = process.env['AMQP_URL'] ?? 'amqp://guest:guest@127.0.0.1:5672';

/** A suite that needs RabbitMQ; without it the suite fails (never skips). */
export function describeWithRabbit(title: string, fn: () => void): void {
  const { hostname, port } = new URL(AMQP_URL);
  describeWithServer(title, { host: hostname, port: Number(port || 5672), name: 'RabbitMQ' }, fn);
}

export const uniqueName = (prefix: string): string =>
  `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
