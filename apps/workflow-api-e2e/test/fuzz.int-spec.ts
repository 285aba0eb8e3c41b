import fc from 'fast-check';
import { stringify } from 'yaml';
import { type ApiServer, Client, e2eModes, startApiServer } from './support/api-server';
import { ACTIONS, DIRECT_WF, REVERSE_WF, TWO_WORKFLOWS, WORKBOOK } from './support/fixtures';

const SEEDS = [DIRECT_WF, REVERSE_WF, TWO_WORKFLOWS, WORKBOOK, ACTIONS];
const UPLOADS = [
  ['POST', '/v2/workflows'],
  ['PUT', '/v2/workflows'],
  ['POST', '/v2/workflows/validate'],
  ['POST', '/v2/workbooks'],
  ['PUT', '/v2/workbooks'],
  ['POST', '/v2/workbooks/validate'],
  ['POST', '/v2/actions'],
  ['PUT', '/v2/actions'],
  ['POST', '/v2/actions/validate'],
] as const;
const NASTY = ['\u0000', '{', '}', '[', ']', ':', '&a', '*a', '!!python/object', '%', '<%', '%>', '{{', '"', "'", '\t', '\n  ', '-', '? ', '|', '>', '#', '\uD800', '😀', 'ä', '2.0', 'null', '~', '---', '...'];

/** A seed document with random edits: cut, duplicated or swapped lines and inserted nasty tokens. */
const mutatedYaml = fc
  .record({
    seed: fc.constantFrom(...SEEDS),
    edits: fc.array(
      fc.record({ kind: fc.constantFrom('cut', 'insert', 'dup', 'swap', 'replace'), at: fc.nat(), len: fc.nat({ max: 40 }), token: fc.constantFrom(...NASTY) }),
      { minLength: 1, maxLength: 6 },
    ),
  })
  .map(({ seed, edits }) => {
    let text = seed;
    for (const e of edits) {
      const at = text.length ? e.at % text.length : 0;
      const lines = text.split('\n');
      const li = lines.length ? e.at % lines.length : 0;
      switch (e.kind) {
        case 'cut':
          text = text.slice(0, at) + text.slice(at + e.len);
          break;
        case 'insert':
          text = text.slice(0, at) + e.token + text.slice(at);
          break;
        case 'replace':
          text = text.slice(0, at) + e.token + text.slice(at + 1);
          break;
        case 'dup':
          lines.splice(li, 0, lines[li] ?? '');
          text = lines.join('\n');
          break;
        case 'swap': {
          const other = (li + e.len) % lines.length;
          [lines[li], lines[other]] = [lines[other] ?? '', lines[li] ?? ''];
          text = lines.join('\n');
          break;
        }
      }
    }
    return text;
  });

/** Arbitrary JSON-like documents dumped as YAML, with and without a version. */
const randomYaml = fc
  .record({ version: fc.constantFrom(undefined, '2.0', 2, '3.0', null), body: fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 4 }), { maxKeys: 4 }) })
  .map(({ version, body }) => stringify(version === undefined ? body : { version, ...body }));

const PARAMS = ['marker', 'limit', 'sort_keys', 'sort_dirs', 'fields', 'name', 'input', 'definition', 'tags', 'scope', 'project_id', 'created_at', 'updated_at', 'all_projects', 'namespace', 'is_system', 'description', 'bogus', 'skip_validation'];
const VALUES = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 10 }),
  fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
  fc.constantFrom('-1', '0', '1', '1000000000000000000000', 'asc', 'desc', 'name,id', 'created_at', 'bogus', 'true', 'false', 'public', '2016-12-01 15:01:00', '00000000-0000-4000-8000-000000000000', '\u0000'),
  fc.tuple(fc.constantFrom('eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'has', 'xx'), fc.string({ maxLength: 12 })).map(([op, v]) => `${op}:${v}`),
);
const queryString = fc
  .array(fc.tuple(fc.constantFrom(...PARAMS), VALUES), { maxLength: 5 })
  .map((pairs) => pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&'));
const READS = ['/v2/workflows', '/v2/workbooks', '/v2/actions', '/v2/workflows/wf_a', '/v2/workbooks/my_wb', '/v2/actions/std.echo', '/v2/workflows/%00', '/v2/actions/' + 'x'.repeat(300)];

const RUNS = Number(process.env['FUZZ_RUNS'] ?? 900);

describe.each(e2eModes())('fuzzing the definitions API (%s)', (mode) => {
  let server: ApiServer;
  let api: Client;
  const statuses = new Map<number, number>();
  let sent = 0;

  const expectNo5xx = async (method: string, path: string, body?: string) => {
    const res = await api.send(method, path, body);
    sent++;
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    if (res.status >= 500 || res.status < 200) {
      throw new Error(`${method} ${path} answered ${res.status}: ${res.text}\nbody: ${JSON.stringify(body)}`);
    }
  };

  beforeAll(async () => {
    server = await startApiServer(mode, { bodyLimit: 64 * 1024 });
    api = new Client(server.baseUrl);
    await api.post('/v2/workflows', TWO_WORKFLOWS);
    await api.post('/v2/workbooks', WORKBOOK);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers mutated YAML uploads with 2xx or 4xx only', async () => {
    await fc.assert(
      fc.asyncProperty(mutatedYaml, fc.constantFrom(...UPLOADS), fc.constantFrom('', '?skip_validation', '?namespace=fz', '?scope=public'), async (text, [method, path], q) => {
        await expectNo5xx(method, path + q, text);
      }),
      { numRuns: RUNS },
    );
  });

  it('answers random YAML documents with 2xx or 4xx only', async () => {
    await fc.assert(
      fc.asyncProperty(randomYaml, fc.constantFrom(...UPLOADS), async (text, [method, path]) => {
        await expectNo5xx(method, path, text);
      }),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  });

  it('answers random query strings with 2xx or 4xx only', async () => {
    await fc.assert(
      fc.asyncProperty(queryString, fc.constantFrom(...READS), fc.constantFrom('GET', 'GET', 'GET', 'DELETE'), async (qs, path, method) => {
        await expectNo5xx(method, `${path}?${qs}`);
      }),
      { numRuns: RUNS },
    );
  });

  it('sent at least 2,000 requests in this mode', () => {
    expect(sent).toBeGreaterThanOrEqual(Math.min(2000, Math.floor(RUNS * 2.5)));
    expect([...statuses.keys()].every((s) => s < 500)).toBe(true);
  });
});
