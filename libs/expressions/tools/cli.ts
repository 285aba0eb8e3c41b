/**
 * Command-line evaluator for people and tests.
 *
 *   npm run -s expr -- '<% $.a + 1 %>' --context '{"a":1}'
 *   npm run -s expr -- --jsonl < cases.jsonl
 *
 * JSONL input lines: {"lang":"yaql"|"jinja","expr":"...","context":{...}}. `expr` may be a bare
 * expression (evaluated in `lang`) or a string with `<% %>` / `{{ }}` / `{% %}` (evaluated as Mistral
 * evaluates workflow strings). Each line gets one output line: {"result": ...} or {"error": "..."}.
 * With "recursive": true, `expr` may be any JSON value and is evaluated as Mistral evaluates task
 * input and publish: dict values and list items recursively, keys as written, strings without
 * expression delimiters returned as text (`--recursive` on the command line: the argument is JSON).
 * Results are printed as Python's json.dumps would (floats keep their `.0`).
 */
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { containsExpression, type ExpressionHost } from '../src';
import { evaluateNative } from '../src/evaluate';
import { evaluateJinjaExpressionNative } from '../src/jinja/engine';
import { pyJsonDumps } from '../src/mistral-functions';
import { fromHost } from '../src/values';
import { evaluateYaqlNative } from '../src/yaql/engine';

const host: ExpressionHost = { uuid: () => randomUUID(), now: () => new Date() };

function evaluateCase(lang: string, expr: unknown, context: unknown, recursive = false): string {
  try {
    let value: unknown;
    if (recursive) value = evaluateNative(expr, context ?? {}, host, { recursive: true });
    else if (typeof expr !== 'string') throw new Error('"expr" must be a string (or set "recursive": true)');
    else if (containsExpression(expr)) value = evaluateNative(expr, context ?? {}, host);
    else if (lang === 'jinja') value = evaluateJinjaExpressionNative(expr, fromHost(context ?? {}), host);
    else if (lang === 'yaql' || lang === undefined)
      value = evaluateYaqlNative(expr, fromHost(context ?? {}), host);
    else throw new Error(`unknown lang ${JSON.stringify(lang)}`);
    return `{"result": ${pyJsonDumps(value, null)}}`;
  } catch (e) {
    return `{"error": ${JSON.stringify(e instanceof Error ? e.message : String(e))}}`;
  }
}

async function runJsonl(): Promise<void> {
  const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of rl) {
    if (line.trim() === '') continue;
    let parsed: { lang?: string; expr?: unknown; context?: unknown; recursive?: unknown };
    try {
      parsed = JSON.parse(line) as typeof parsed;
    } catch {
      process.stdout.write(`{"error": "invalid JSON input line"}\n`);
      continue;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      process.stdout.write(`{"error": "input line must be a JSON object"}\n`);
      continue;
    }
    process.stdout.write(
      `${evaluateCase(parsed.lang ?? 'yaql', parsed.expr, parsed.context, parsed.recursive === true)}\n`,
    );
  }
}

function usage(): never {
  process.stderr.write(
    "usage: expr '<expression>' [--context JSON] [--lang yaql|jinja] [--recursive] | expr --jsonl\n",
  );
  process.exit(2);
}

async function main(argv: string[]): Promise<void> {
  if (argv.includes('--jsonl')) return runJsonl();
  let expr: string | undefined;
  let context: unknown = {};
  let lang = 'yaql';
  let recursive = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? '';
    if (a === '--context') {
      try {
        context = JSON.parse(argv[++i] ?? '');
      } catch {
        process.stderr.write('--context must be JSON\n');
        process.exit(2);
      }
    } else if (a === '--recursive') recursive = true;
    else if (a === '--lang') lang = argv[++i] ?? usage();
    else if (a === '--help' || a === '-h') usage();
    else if (expr === undefined) expr = a;
    else usage();
  }
  if (expr === undefined) usage();
  let value: unknown = expr;
  if (recursive) {
    try {
      value = JSON.parse(expr);
    } catch {
      process.stderr.write('with --recursive the argument must be JSON\n');
      process.exit(2);
    }
  }
  const out = evaluateCase(lang, value, context, recursive);
  process.stdout.write(`${out}\n`);
  if (out.startsWith('{"error"')) process.exitCode = 1;
}

main(process.argv.slice(2)).catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
