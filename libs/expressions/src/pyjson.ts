import { fail } from './errors';
import { checkSize, mkFloat } from './values';

/**
 * Python's `json.loads` into the value model: a number written with a fraction or an exponent is
 * a float (`2.0` stays a float), objects are insertion-ordered Maps (a repeated key keeps its first
 * position and its last value), NaN/Infinity/-Infinity are accepted, control characters inside
 * strings are not (strict mode). Errors read as JSONDecodeError's.
 */
export function parsePyJson(text: string): unknown {
  const p = new JsonParser(text);
  p.ws();
  const value = p.value(0);
  p.ws();
  if (p.pos < text.length) p.error('Extra data');
  return value;
}

const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?/y;

class JsonParser {
  pos = 0;
  constructor(private readonly text: string) {}

  error(what: string, at = this.pos): never {
    const before = this.text.slice(0, at);
    const line = before.split('\n').length;
    const column = at - before.lastIndexOf('\n');
    return fail(`${what}: line ${line} column ${column} (char ${at})`, 'JSONDecodeError');
  }

  ws(): void {
    while (this.pos < this.text.length && ' \t\n\r'.includes(this.text[this.pos]!)) this.pos++;
  }

  value(depth: number): unknown {
    if (depth > 500)
      fail('maximum recursion depth exceeded while decoding a JSON document', 'RecursionError');
    const t = this.text;
    const ch = t[this.pos];
    if (ch === '"') return this.string();
    if (ch === '{') return this.object(depth);
    if (ch === '[') return this.array(depth);
    for (const [word, v] of [
      ['null', null],
      ['true', true],
      ['false', false],
      ['NaN', NaN],
      ['Infinity', Infinity],
      ['-Infinity', -Infinity],
    ] as const) {
      if (t.startsWith(word, this.pos)) {
        this.pos += word.length;
        return typeof v === 'number' ? mkFloat(v) : v;
      }
    }
    NUMBER.lastIndex = this.pos;
    const m = NUMBER.exec(t);
    if (m) {
      this.pos += m[0].length;
      return m[1] !== undefined || m[2] !== undefined ? mkFloat(Number(m[0])) : Number(m[0]);
    }
    return this.error('Expecting value');
  }

  string(): string {
    const t = this.text;
    const start = this.pos;
    this.pos++;
    let out = '';
    for (;;) {
      const ch = t[this.pos];
      if (ch === undefined) return this.error('Unterminated string starting at', start);
      if (ch === '"') {
        this.pos++;
        return out;
      }
      if (ch < ' ') return this.error('Invalid control character at');
      if (ch !== '\\') {
        out += ch;
        this.pos++;
        continue;
      }
      const esc = t[this.pos + 1];
      const simple: Record<string, string> = {
        '"': '"',
        '\\': '\\',
        '/': '/',
        b: '\b',
        f: '\f',
        n: '\n',
        r: '\r',
        t: '\t',
      };
      if (esc !== undefined && esc in simple) {
        out += simple[esc];
        this.pos += 2;
      } else if (esc === 'u') {
        const hex = t.slice(this.pos + 2, this.pos + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) return this.error('Invalid \\uXXXX escape');
        out += String.fromCharCode(parseInt(hex, 16));
        this.pos += 6;
      } else return this.error('Invalid \\escape');
      checkSize(out.length, 'string');
    }
  }

  object(depth: number): Map<unknown, unknown> {
    const m = new Map<unknown, unknown>();
    this.pos++;
    this.ws();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return m;
    }
    for (;;) {
      if (this.text[this.pos] !== '"') return this.error('Expecting property name enclosed in double quotes');
      const key = this.string();
      this.ws();
      if (this.text[this.pos] !== ':') return this.error("Expecting ':' delimiter");
      this.pos++;
      this.ws();
      m.set(key, this.value(depth + 1));
      checkSize(m.size, 'collection');
      this.ws();
      const ch = this.text[this.pos];
      if (ch === '}') {
        this.pos++;
        return m;
      }
      if (ch !== ',') return this.error("Expecting ',' delimiter");
      this.pos++;
      this.ws();
    }
  }

  array(depth: number): unknown[] {
    const out: unknown[] = [];
    this.pos++;
    this.ws();
    if (this.text[this.pos] === ']') {
      this.pos++;
      return out;
    }
    for (;;) {
      out.push(this.value(depth + 1));
      checkSize(out.length, 'collection');
      this.ws();
      const ch = this.text[this.pos];
      if (ch === ']') {
        this.pos++;
        return out;
      }
      if (ch !== ',') return this.error("Expecting ',' delimiter");
      this.pos++;
      this.ws();
    }
  }
}
