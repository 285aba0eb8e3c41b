import { STANDARD_ACTIONS, checkActionInput, findStandardAction, isStandardAction } from './standard-actions';

describe('STANDARD_ACTIONS', () => {
  it('has unique std.* names', () => {
    const names = STANDARD_ACTIONS.map((a) => a.name);
    expect(new Set(names).size).toBe(names.length);
    for (const n of names) expect(n).toMatch(/^std\.\w+$/);
  });

  it.each([
    ['std.noop', ''],
    ['std.async_noop', ''],
    ['std.echo', 'output, delay=0'],
    ['std.fail', 'error_data=null'],
    ['std.sleep', 'seconds=1'],
    ['std.test_dict', 'size=0, key_prefix="", val=""'],
    [
      'std.http',
      'url, method="GET", params=null, body=null, json=null, headers=null, cookies=null, auth=null, timeout=null, allow_redirects=null, proxies=null, verify=null',
    ],
    [
      'std.email',
      'from_addr, to_addrs, smtp_server, reply_to=null, cc_addrs=null, bcc_addrs=null, smtp_password=null, subject=null, body=null, html_body=null',
    ],
    ['std.javascript', 'script, context=null'],
    ['std.js', 'script, context=null'],
    [
      'std.ssh',
      'cmd, host, username, password="", private_key_filename=null, private_key=null, return_result_on_error=false',
    ],
    ['std.wait_ssh', 'host, username, password'],
  ])('%s input is %j', (name, input) => {
    expect(findStandardAction(name)?.inputString).toBe(input);
  });

  it('marks the asynchronous actions', () => {
    expect(STANDARD_ACTIONS.filter((a) => a.async).map((a) => a.name)).toEqual([
      'std.async_noop',
      'std.mistral_http',
    ]);
  });

  it('knows which names are standard', () => {
    expect(isStandardAction('std.echo')).toBe(true);
    expect(isStandardAction('std.nope')).toBe(false);
    expect(isStandardAction('my.echo')).toBe(false);
  });
});

describe('checkActionInput', () => {
  const echo = findStandardAction('std.echo')!.input;
  it.each<[Record<string, unknown>, string[], string[]]>([
    [{ output: 1 }, [], []],
    [{ output: 1, delay: 2 }, [], []],
    [{}, ['output'], []],
    [{ delay: 1, colour: 'red' }, ['output'], ['colour']],
  ])('%j', (given, missing, unexpected) => {
    expect(checkActionInput(echo, given)).toEqual({ missing, unexpected });
  });
});
