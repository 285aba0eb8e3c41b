import { createJsonLogger, NestJsonLogger } from './json-logger';

describe('NestJsonLogger', () => {
  const capture = (level: string) => {
    const lines: Record<string, unknown>[] = [];
    const logger = new NestJsonLogger(
      createJsonLogger({ app: 'test', level, stream: { write: (l) => lines.push(JSON.parse(l)) } }),
    );
    return { logger, lines };
  };

  it('writes a message object as the line keys, its msg as the message', () => {
    const { logger, lines } = capture('info');
    logger.log({ msg: 'task SUCCESS', executionId: 'e1' }, 'Engine');
    logger.warn('slow');
    expect(lines.map((l) => [l['level'], l['msg'], l['executionId'], l['context']])).toEqual([
      ['info', 'task SUCCESS', 'e1', 'Engine'],
      ['warn', 'slow', undefined, undefined],
    ]);
  });

  it('leaves the message of a level that is off untouched, and writes nothing', () => {
    const { logger, lines } = capture('error');
    let read = 0;
    const message = {
      get msg() {
        read++;
        return 'never';
      },
    };
    logger.log(message);
    logger.warn(message);
    logger.debug(message);
    logger.verbose(message);
    expect([read, lines]).toEqual([0, []]);
    logger.error(message);
    expect([read, lines.map((l) => l['msg'])]).toEqual([1, ['never']]);
  });
});
