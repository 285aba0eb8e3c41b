import { EventEmitter } from 'node:events';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HEARTBEAT_MS, openSse, wantsStream } from './sse';

/** The parts of a Node response openSse touches, recording what is written. */
class FakeRaw extends EventEmitter {
  written: string[] = [];
  head: { status: number; headers: Record<string, string> } | null = null;
  ended = false;
  writableLength = 0;
  writeHead(status: number, headers: Record<string, string>) {
    this.head = { status, headers };
  }
  write(chunk: string) {
    this.written.push(chunk);
    this.writableLength += chunk.length;
    return this.writableLength === chunk.length;
  }
  end() {
    this.ended = true;
  }
}

const open = (onClose = jest.fn(), maxBufferedBytes?: number) => {
  const raw = new FakeRaw();
  const reply = { hijack: jest.fn(), raw } as unknown as FastifyReply;
  const sse = openSse({ id: 'req-1' } as FastifyRequest, reply, onClose, HEARTBEAT_MS, maxBufferedBytes);
  return { raw, sse, onClose, reply };
};

describe('openSse', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('answers 200 text/event-stream with a retry hint, then writes each batch of messages in one write', () => {
    const { raw, sse, reply } = open();
    expect(reply.hijack).toHaveBeenCalled();
    expect(raw.head).toEqual({
      status: 200,
      headers: expect.objectContaining({
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        'x-openstack-request-id': 'req-1',
      }),
    });
    sse.send([
      { id: 7, event: 'execution', data: { a: 1 } },
      { id: 8, event: 'execution', data: 'x' },
    ]);
    sse.send([]);
    expect(raw.written).toEqual([
      'retry: 2000\n\n',
      'id: 7\nevent: execution\ndata: {"a":1}\n\nid: 8\nevent: execution\ndata: "x"\n\n',
    ]);
  });

  it('sends a heartbeat comment every 15 s until closed, and closes once', () => {
    const { raw, sse, onClose } = open();
    jest.advanceTimersByTime(HEARTBEAT_MS - 1);
    expect(raw.written).toEqual(['retry: 2000\n\n']);
    jest.advanceTimersByTime(1);
    jest.advanceTimersByTime(HEARTBEAT_MS);
    expect(raw.written.slice(1)).toEqual([': heartbeat\n\n', ': heartbeat\n\n']);
    expect(HEARTBEAT_MS).toBe(15_000);
    raw.emit('close');
    sse.close();
    expect(onClose).toHaveBeenCalledTimes(1);
    expect(raw.ended).toBe(true);
    expect(sse.open).toBe(false);
    jest.advanceTimersByTime(HEARTBEAT_MS * 3);
    sse.send([{ id: 9, event: 'execution', data: {} }]);
    expect(raw.written).toHaveLength(3);
  });
});

describe('openSse with a client that does not read', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('closes the stream once more than the limit waits in its buffer, and writes nothing after', () => {
    const onClose = jest.fn();
    const { raw, sse } = open(onClose, 100);
    raw.writableLength = 0;
    sse.send([{ id: 1, event: 'task', data: { n: 'x'.repeat(40) } }]);
    expect(sse.open).toBe(true);
    sse.send([{ id: 2, event: 'task', data: { n: 'y'.repeat(40) } }]);
    expect(sse.open).toBe(false);
    expect(onClose).toHaveBeenCalledTimes(1);
    expect(raw.ended).toBe(true);
    sse.send([{ id: 3, event: 'task', data: {} }]);
    expect(raw.written.map((w) => w.split('\n')[0])).toEqual(['retry: 2000', 'id: 1', 'id: 2']);
  });

  it('serializes a message shared by several streams once, and by its own id and event', () => {
    const change = { position: 5 };
    const a = open();
    const b = open();
    const stringify = jest.spyOn(JSON, 'stringify');
    a.sse.send([{ id: 5, event: 'execution', data: change }]);
    b.sse.send([{ id: 5, event: 'execution', data: change }]);
    b.sse.send([{ id: 6, event: 'other', data: change }]);
    expect(stringify).toHaveBeenCalledTimes(2);
    stringify.mockRestore();
    expect(a.raw.written[1]).toBe('id: 5\nevent: execution\ndata: {"position":5}\n\n');
    expect(b.raw.written.slice(1)).toEqual([
      a.raw.written[1],
      'id: 6\nevent: other\ndata: {"position":5}\n\n',
    ]);
  });
});

describe('wantsStream', () => {
  it.each([
    ['text/event-stream', true],
    ['application/json, text/event-stream;q=0.9', true],
    ['application/json', false],
    [undefined, false],
  ])('%s → %s', (accept, expected) => expect(wantsStream(accept)).toBe(expected));
});
