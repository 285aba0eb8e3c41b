import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as received, whatever the encoding: ids as lowercase hex. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** `application/json` or `application/x-protobuf`: how the span arrived. */
  encoding: string;
}

/**
 * A minimal OTLP/HTTP trace receiver for tests: `POST /v1/traces` in OTLP JSON or OTLP protobuf
 * (decoded here from the wire format, field numbers of opentelemetry-proto's trace.proto), every
 * span kept in `spans`. Answers 200 with an empty ExportTraceServiceResponse.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  private server?: Server;

  async listen(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
        try {
          if (req.method !== 'POST' || req.url !== '/v1/traces')
            throw new Error(`unexpected ${req.method} ${req.url}`);
          if (type === 'application/json')
            this.spans.push(...fromJson(JSON.parse(body.toString('utf8')) as OtlpJson));
          else if (type === 'application/x-protobuf') this.spans.push(...fromProtobuf(body));
          else throw new Error(`unexpected content type ${type}`);
          res
            .writeHead(200, { 'content-type': type })
            .end(type === 'application/json' ? '{}' : Buffer.alloc(0));
        } catch (err) {
          res.writeHead(400).end(String(err));
        }
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

interface OtlpJsonValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpJsonKv {
  key: string;
  value: OtlpJsonValue;
}
interface OtlpJson {
  resourceSpans?: {
    resource?: { attributes?: OtlpJsonKv[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind?: number;
        attributes?: OtlpJsonKv[];
      }[];
    }[];
  }[];
}

function jsonAttributes(list: OtlpJsonKv[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    const v =
      value.stringValue ??
      value.boolValue ??
      value.doubleValue ??
      (value.intValue === undefined ? undefined : Number(value.intValue));
    if (v !== undefined) out[key] = v;
  }
  return out;
}

function fromJson(body: OtlpJson): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const rs of body.resourceSpans ?? []) {
    const service = String(jsonAttributes(rs.resource?.attributes)['service.name'] ?? '');
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        spans.push({
          service,
          traceId: s.traceId.toLowerCase(),
          spanId: s.spanId.toLowerCase(),
          parentSpanId: (s.parentSpanId ?? '').toLowerCase(),
          name: s.name,
          kind: s.kind ?? 0,
          attributes: jsonAttributes(s.attributes),
          encoding: 'application/json',
        });
      }
    }
  }
  return spans;
}

/** One protobuf field: number, and its value (varint as bigint, bytes for length-delimited). */
type Field = { no: number; varint?: bigint; bytes?: Buffer; fixed?: Buffer };

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = buf[pos++];
      if (b === undefined) throw new Error('truncated varint');
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (pos < buf.length) {
    const key = Number(varint());
    const no = key >> 3;
    switch (key & 7) {
      case 0:
        out.push({ no, varint: varint() });
        break;
      case 1:
        out.push({ no, fixed: buf.subarray(pos, (pos += 8)) });
        break;
      case 2: {
        const len = Number(varint());
        out.push({ no, bytes: buf.subarray(pos, (pos += len)) });
        break;
      }
      case 5:
        out.push({ no, fixed: buf.subarray(pos, (pos += 4)) });
        break;
      default:
        throw new Error(`unsupported wire type ${key & 7}`);
    }
  }
  return out;
}

const sub = (fs: Field[], no: number): Buffer[] =>
  fs.filter((f) => f.no === no && f.bytes).map((f) => f.bytes as Buffer);

function pbAttributes(kvs: Buffer[]): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const kv of kvs) {
    const f = fields(kv);
    const key = sub(f, 1)[0]?.toString('utf8');
    const value = sub(f, 2)[0];
    if (key === undefined || value === undefined) continue;
    const v = fields(value)[0];
    if (!v) continue;
    if (v.no === 1 && v.bytes) out[key] = v.bytes.toString('utf8');
    else if (v.no === 2 && v.varint !== undefined) out[key] = v.varint !== 0n;
    else if (v.no === 3 && v.varint !== undefined) out[key] = Number(BigInt.asIntN(64, v.varint));
    else if (v.no === 4 && v.fixed) out[key] = v.fixed.readDoubleLE(0);
  }
  return out;
}

function fromProtobuf(body: Buffer): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const rs of sub(fields(body), 1)) {
    const rsf = fields(rs);
    const resource = sub(rsf, 1)[0];
    const service = String(resource ? (pbAttributes(sub(fields(resource), 1))['service.name'] ?? '') : '');
    for (const ss of sub(rsf, 2)) {
      for (const span of sub(fields(ss), 2)) {
        const f = fields(span);
        spans.push({
          service,
          traceId: sub(f, 1)[0]?.toString('hex') ?? '',
          spanId: sub(f, 2)[0]?.toString('hex') ?? '',
          parentSpanId: sub(f, 4)[0]?.toString('hex') ?? '',
          name: sub(f, 5)[0]?.toString('utf8') ?? '',
          kind: Number(f.find((x) => x.no === 6)?.varint ?? 0n),
          attributes: pbAttributes(sub(f, 9)),
          encoding: 'application/x-protobuf',
        });
      }
    }
  }
  return spans;
}
