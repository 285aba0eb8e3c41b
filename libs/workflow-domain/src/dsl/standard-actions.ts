import { type InputParameter } from './model';
import { pyJsonDumps } from './python-text';

/** A standard (system) action: name, parameter list and how it completes. */
export interface StandardAction {
  readonly name: string;
  readonly description: string;
  readonly input: readonly InputParameter[];
  /** The API's `input` string, e.g. `output, delay=0` (defaults as JSON, DSL-7.1 format). */
  readonly inputString: string;
  /** Completes when a result is posted for it (std.async_noop, std.mistral_http), not when it returns. */
  readonly async: boolean;
  /** Present for standard actions that are themselves ad-hoc actions over another one (std.wait_ssh). */
  readonly base?: string;
  readonly baseInput?: Readonly<Record<string, unknown>>;
}

const req = (name: string): InputParameter => ({ name, required: true });
const opt = (name: string, value: unknown): InputParameter => ({ name, required: false, default: value });

const inputString = (input: readonly InputParameter[]): string =>
  input.map((p) => (p.required ? p.name : `${p.name}=${pyJsonDumps(p.default ?? null)}`)).join(', ');

const HTTP_INPUT = [
  req('url'),
  opt('method', 'GET'),
  opt('params', null),
  opt('body', null),
  opt('json', null),
  opt('headers', null),
  opt('cookies', null),
  opt('auth', null),
  opt('timeout', null),
  opt('allow_redirects', null),
  opt('proxies', null),
  opt('verify', null),
];

const JS_INPUT = [req('script'), opt('context', null)];

const SSH_INPUT = [
  req('cmd'),
  req('host'),
  req('username'),
  opt('password', ''),
  opt('private_key_filename', null),
  opt('private_key', null),
  opt('return_result_on_error', false),
];

const define = (
  name: string,
  description: string,
  input: InputParameter[],
  extra: Partial<Pick<StandardAction, 'async' | 'base' | 'baseInput'>> = {},
): StandardAction => ({ name, description, input, inputString: inputString(input), async: false, ...extra });

/**
 * The standard actions with their reference parameter lists (DSL-17), in the order the reference
 * registers them. Used by the actions API (`is_system`) and by action input validation (DSL-3.5).
 */
export const STANDARD_ACTIONS: readonly StandardAction[] = [
  define('std.async_noop', 'Does nothing and completes only when a result is posted for it.', [], {
    async: true,
  }),
  define('std.noop', 'Does nothing; the result is null.', []),
  define('std.fail', 'Always fails, with error_data as the error value when given.', [
    opt('error_data', null),
  ]),
  define('std.echo', 'Returns output as its result, after an optional delay in seconds.', [
    req('output'),
    opt('delay', 0),
  ]),
  define('std.http', 'Sends an HTTP request and returns the response.', HTTP_INPUT),
  define(
    'std.mistral_http',
    'Sends an HTTP request with Mistral callback headers and waits for the callback.',
    HTTP_INPUT,
    {
      async: true,
    },
  ),
  define('std.ssh', 'Runs a command over SSH.', SSH_INPUT),
  define('std.ssh_proxied', 'Runs a command over SSH through a gateway host.', [
    req('cmd'),
    req('host'),
    req('username'),
    req('private_key_filename'),
    req('gateway_host'),
    opt('gateway_username', null),
    opt('password', null),
    opt('proxy_command', null),
    opt('private_key', null),
  ]),
  define('std.email', 'Sends an e-mail over SMTP.', [
    req('from_addr'),
    req('to_addrs'),
    req('smtp_server'),
    opt('reply_to', null),
    opt('cc_addrs', null),
    opt('bcc_addrs', null),
    opt('smtp_password', null),
    opt('subject', null),
    opt('body', null),
    opt('html_body', null),
  ]),
  define('std.javascript', 'Evaluates a JavaScript snippet in a sandbox; context is visible as $.', JS_INPUT),
  define('std.js', 'Alias of std.javascript.', JS_INPUT),
  define('std.sleep', 'Sleeps for the given number of seconds; the result is null.', [opt('seconds', 1)]),
  define('std.test_dict', 'Returns a map of size entries {key_prefix<i>: val}.', [
    opt('size', 0),
    opt('key_prefix', ''),
    opt('val', ''),
  ]),
  define(
    'std.wait_ssh',
    'Runs a trivial command over SSH (useful to wait until a host accepts SSH).',
    [req('host'), req('username'), req('password')],
    {
      base: 'std.ssh',
      baseInput: {
        host: '<% $.host %>',
        username: '<% $.username %>',
        password: '<% $.password %>',
        cmd: 'ls -l',
      },
    },
  ),
];

const BY_NAME: ReadonlyMap<string, StandardAction> = new Map(STANDARD_ACTIONS.map((a) => [a.name, a]));

/** The standard action of that name, if any. */
export const findStandardAction = (name: string): StandardAction | undefined => BY_NAME.get(name);

export const isStandardAction = (name: string): boolean => BY_NAME.has(name);

/**
 * Checks an action input against declared parameters (DSL-3.5): the names missing (required, not given)
 * and unexpected (given, not declared), in declaration/given order. Both empty means the input fits.
 */
export const checkActionInput = (
  params: readonly InputParameter[],
  given: Readonly<Record<string, unknown>>,
): { missing: string[]; unexpected: string[] } => {
  const declared = new Set(params.map((p) => p.name));
  return {
    missing: params.filter((p) => p.required && !(p.name in given)).map((p) => p.name),
    unexpected: Object.keys(given).filter((k) => !declared.has(k)),
  };
};
