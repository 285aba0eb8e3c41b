import { SseParser } from './event-stream';

describe('SseParser', () => {
  it('parses messages split across chunks, with comments, retry and CRLF', () => {
    const p = new SseParser();
    expect(p.push('retry: 2000\n\n: heartbeat\n\nid: 7\nevent: ta')).toEqual([]);
    expect(p.push('sk\ndata: {"seq":7}\r\n\r\nid: 8\ndata: a\ndata: b\n')).toEqual([
      { id: '7', event: 'task', data: '{"seq":7}' },
    ]);
    expect(p.push('\n')).toEqual([{ id: '8', event: 'message', data: 'a\nb' }]);
  });
});
