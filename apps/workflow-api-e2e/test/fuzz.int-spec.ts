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

/**
 * 4,000 runs give about 10,000 requests in embedded mode (issue #15 item 6); PostgreSQL mode runs a
 * quarter of them (about 2,500 requests) to stay within the CI budget (the full count there takes
 * another minute on the shared CI machine). The seed is fixed and printed; FUZZ_SEED=<n> replays a
 * run, FUZZ_RUNS=<n> sets the embedded count (the other mode takes a quarter).
 */
const FULL_RUNS = Number(process.env['FUZZ_RUNS'] ?? 4000);
const SEED = Number(process.env['FUZZ_SEED'] ?? 20150415);

describe.each(e2eModes())('fuzzing the definitions API (%s)', (mode) => {
  const RUNS = mode === 'embedded' ? FULL_RUNS : Math.ceil(FULL_RUNS / 4);
  let server: ApiServer;
  let api: Client;
  const statuses = new Map<number, number>();
  let sent = 0;

  const expectNo5xx = async (method: string, path: string, body?: string) => {
    const res = await api.send(method, path, body).catch((err: unknown) => {
      // fetch rejects on a reset or closed connection: that is a finding too.
      throw new Error(`${method} ${path} got no answer (${String((err as Error)?.cause ?? err)})\nbody: ${JSON.stringify(body)}`);
    });
    sent++;
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    if (res.status >= 500 || res.status < 200) {
      throw new Error(`${method} ${path} answered ${res.status}: ${res.text}\nbody: ${JSON.stringify(body)}`);
    }
  };

  beforeAll(async () => {
    process.stdout.write(`workflow-api fuzz (${mode}): seed ${SEED}, ${RUNS} runs (FUZZ_SEED / FUZZ_RUNS to change)\n`);
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
      { numRuns: RUNS, seed: SEED },
    );
  }, 600_000);

  it('answers random YAML documents with 2xx or 4xx only', async () => {
    await fc.assert(
      fc.asyncProperty(randomYaml, fc.constantFrom(...UPLOADS), async (text, [method, path]) => {
        await expectNo5xx(method, path, text);
      }),
      { numRuns: Math.ceil(RUNS / 2), seed: SEED + 1 },
    );
  }, 600_000);

  it('answers random query strings with 2xx or 4xx only', async () => {
    await fc.assert(
      fc.asyncProperty(queryString, fc.constantFrom(...READS), fc.constantFrom('GET', 'GET', 'GET', 'DELETE'), async (qs, path, method) => {
        await expectNo5xx(method, `${path}?${qs}`);
      }),
      { numRuns: RUNS, seed: SEED + 2 },
    );
  }, 600_000);

  it('sent 2.5 requests per run (10,000 in embedded mode by default)', () => {
    expect(sent).toBeGreaterThanOrEqual(Math.floor(RUNS * 2.5));
    expect([...statuses.keys()].every((s) => s < 500)).toBe(true);
  });
});
