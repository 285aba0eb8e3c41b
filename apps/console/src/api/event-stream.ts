import { authHeaders } from './http';
import type { ExecutionEvent, ExecutionStateChange } from './mistral';

/** One parsed Server-Sent Event. */
export interface SseMessage {
  readonly id: string | null;
  readonly event: string;
  readonly data: string;
}

/**
 * Feeds text chunks of a `text/event-stream` body and returns the complete messages (the
 * WHATWG rules that matter here: `id:`, `event:`, multi-line `data:`, comments, CRLF).
 */
export class SseParser {
  private buffer = '';
  private id: string | null = null;
  private event = '';
  private data: string[] = [];

  push(chunk: string): SseMessage[] {
    this.buffer += chunk;
    const out: SseMessage[] = [];
    for (;;) {
      const nl = this.buffer.search(/\r\n|\n|\r/);
      if (nl < 0) break;
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(this.buffer.startsWith('\r\n', nl) ? nl + 2 : nl + 1);
      if (line === '') {
        if (this.data.length > 0)
          out.push({ id: this.id, event: this.event || 'message', data: this.data.join('\n') });
        this.event = '';
        this.data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') this.data.push(value);
      else if (field === 'event') this.event = value;
      else if (field === 'id') this.id = value;
    }
    return out;
  }
}

/**
 * Follows `GET /v2/executions/{id}/events` as Server-Sent Events over fetch streaming (so the
 * token goes in `X-Auth-Token`, which EventSource cannot send), from after `afterSeq`. Resolves
 * when the server ends the stream (after the execution's terminal entry) or `signal` aborts;
 * rejects on a network or HTTP error. The caller reconnects from the last seq it saw.
 */
export async function followExecutionEvents(
  executionId: string,
  afterSeq: number,
  onEvent: (e: ExecutionEvent) => void,
  signal: AbortSignal,
): Promise<void> {
  const res = await fetch(`/v2/executions/${encodeURIComponent(executionId)}/events?marker=${afterSeq}`, {
    headers: { Accept: 'text/event-stream', ...authHeaders() },
    signal,
  });
  if (!res.ok || !res.body) throw new Error(`event stream answered HTTP ${res.status}`);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  const parser = new SseParser();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    for (const m of parser.push(value)) {
      if (m.event === 'execution' || m.event === 'task' || m.event === 'action')
        onEvent(JSON.parse(m.data) as ExecutionEvent);
    }
  }
}

/**
 * Follows the project stream of execution state changes (`GET /v2/executions` as Server-Sent
 * Events, docs/workflow-events.md) after `afterPosition` (null: from now). `onOpen` gets the
 * position the stream starts at (load the list then); `onChange` each change, in order. Never
 * resolves by itself (the stream does not end); rejects on a network or HTTP error, and the
 * caller reconnects from the last position it saw.
 */
export async function followExecutionStateChanges(
  opts: { allProjects: boolean; afterPosition: number | null },
  onOpen: (position: number) => void,
  onChange: (c: ExecutionStateChange) => void,
  signal: AbortSignal,
): Promise<void> {
  const params = new URLSearchParams();
  if (opts.allProjects) params.set('all_projects', 'true');
  if (opts.afterPosition !== null) params.set('marker', String(opts.afterPosition));
  const query = params.toString();
  const res = await fetch(`/v2/executions${query ? `?${query}` : ''}`, {
    headers: { Accept: 'text/event-stream', ...authHeaders() },
    signal,
  });
  if (!res.ok || !res.body) throw new Error(`execution stream answered HTTP ${res.status}`);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  const parser = new SseParser();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error('execution stream closed');
    for (const m of parser.push(value)) {
      if (m.event === 'position') onOpen(Number(m.id));
      else if (m.event === 'execution') onChange(JSON.parse(m.data) as ExecutionStateChange);
    }
  }
}
