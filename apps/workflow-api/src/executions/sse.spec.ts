import { EventEmitter } from 'node:events';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HEARTBEAT_MS, openSse, wantsStream } from './sse';

/** The parts of a Node response openSse touches, recording what is written. */
class FakeRaw extends EventEmitter {
  written: string[] = [];
  head: { status: number; headers: Record<string, string> } | null = null;
  ended = false;
  writeHead(status: number, headers: Record<string, string>) {
    this.head = { status, headers };
  }
  write(chunk: string) {
    this.written.push(chunk);
    return true;
  }
  end() {
    this.ended = true;
  }
}

const open = (onClose = jest.fn()) => {
  const raw = new FakeRaw();
  const reply = { hijack: jest.fn(), raw } as unknown as FastifyReply;
  const sse = openSse({ id: 'req-1' } as FastifyRequest, reply, onClose);
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
      headers: expect.objectContaining({ 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', 'x-openstack-request-id': 'req-1' }),
    });
    sse.send([
      { id: 7, event: 'execution', data: { a: 1 } },
      { id: 8, event: 'execution', data: 'x' },
    ]);
    sse.send([]);
    expect(raw.written).toEqual(['retry: 2000\n\n', 'id: 7\nevent: execution\ndata: {"a":1}\n\nid: 8\nevent: execution\ndata: "x"\n\n']);
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

describe('wantsStream', () => {
  it.each([
    ['text/event-stream', true],
    ['application/json, text/event-stream;q=0.9', true],
    ['application/json', false],
    [undefined, false],
  ])('%s → %s', (accept, expected) => expect(wantsStream(accept)).toBe(expected));
});
