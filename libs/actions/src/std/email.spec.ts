import { type AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerAuthentication, type SMTPServerSession } from 'smtp-server';
import { ctxFor } from '../../test/action-context';
import { StandardActionRunner } from '../action-runner';
import { parseSmtpServer } from './email';

interface Received {
  from: string | false | undefined;
  to: string[];
  raw: string;
  user: string | undefined;
  secure: boolean;
}

async function startSmtp(): Promise<{
  address: string;
  received: Received[];
  auths: SMTPServerAuthentication[];
  close(): Promise<void>;
}> {
  const received: Received[] = [];
  const auths: SMTPServerAuthentication[] = [];
  const server = new SMTPServer({
    authOptional: true,
    logger: false,
    onAuth(auth, _session, callback) {
      auths.push(auth);
      if (auth.password === 'right') callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session: SMTPServerSession, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : undefined,
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
          user: session.user as string | undefined,
          secure: session.secure,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    received,
    auths,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

// Generous per-test bound: CI shares 2 cores with other suites; the assertions carry the real bounds.
jest.setTimeout(30_000);

describe('std.email against a local SMTP server', () => {
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  // The test server's built-in certificate is self-signed.
  const runner = new StandardActionRunner({ email: { rejectUnauthorized: false, timeoutMs: 5_000 } });
  const ctx = ctxFor();

  beforeAll(async () => {
    smtp = await startSmtp();
  });
  afterAll(() => smtp.close());

  it('sends a plain message to to + cc + bcc with the reference defaults', async () => {
    const outcome = await runner.run(
      'std.email',
      {
        from_addr: 'wf@example.org',
        to_addrs: ['a@example.org', 'b@example.org'],
        cc_addrs: ['c@example.org'],
        bcc_addrs: ['hidden@example.org'],
        smtp_server: smtp.address,
      },
      ctx,
    );
    expect(outcome).toEqual({ kind: 'success', result: null });
    const msg = smtp.received.at(-1)!;
    expect(msg.from).toBe('wf@example.org');
    expect(msg.to).toEqual(['c@example.org', 'hidden@example.org', 'a@example.org', 'b@example.org']);
    expect(msg.raw).toMatch(/^To: a@example.org, b@example.org$/m);
    expect(msg.raw).toMatch(/^Cc: c@example.org$/m);
    expect(msg.raw).not.toMatch(/hidden@example.org/);
    expect(msg.raw).toMatch(/^Subject: <No subject>$/m);
    expect(msg.raw).toContain('<No body>');
    expect(msg.user).toBeUndefined();
    expect(msg.secure).toBe(false);
  });

  it('adds an HTML alternative, subject and reply-to', async () => {
    await runner.run(
      'std.email',
      {
        from_addr: 'wf@example.org',
        to_addrs: ['a@example.org'],
        reply_to: ['r@example.org'],
        subject: 'Report',
        body: 'text version',
        html_body: '<b>html version</b>',
        smtp_server: smtp.address,
      },
      ctx,
    );
    const raw = smtp.received.at(-1)!.raw;
    expect(raw).toMatch(/^Subject: Report$/m);
    expect(raw).toMatch(/^Reply-To: r@example.org$/m);
    expect(raw).toMatch(/multipart\/alternative/);
    expect(raw).toContain('text version');
    expect(raw).toContain('<b>html version</b>');
  });

  it('with smtp_password it upgrades with STARTTLS and logs in as from_addr', async () => {
    const ok = await runner.run(
      'std.email',
      {
        from_addr: 'wf@example.org',
        to_addrs: ['a@example.org'],
        smtp_server: smtp.address,
        smtp_password: 'right',
      },
      ctx,
    );
    expect(ok).toEqual({ kind: 'success', result: null });
    expect(smtp.received.at(-1)).toMatchObject({ user: 'wf@example.org', secure: true });
    const denied = await runner.run(
      'std.email',
      {
        from_addr: 'wf@example.org',
        to_addrs: ['a@example.org'],
        smtp_server: smtp.address,
        smtp_password: 'wrong',
      },
      ctx,
    );
    expect(denied).toEqual({
      kind: 'error',
      error: expect.stringContaining("msg='Failed to send an email message: "),
    });
  });

  it('an unreachable server fails the action', async () => {
    const outcome = await runner.run(
      'std.email',
      { from_addr: 'wf@example.org', to_addrs: ['a@example.org'], smtp_server: '127.0.0.1:1' },
      ctx,
    );
    expect(outcome).toEqual({
      kind: 'error',
      error: expect.stringContaining('Failed to send an email message: '),
    });
  });

  it('reads smtp_server as host[:port]', () => {
    expect(parseSmtpServer('mail.example.org')).toEqual({ host: 'mail.example.org', port: 25 });
    expect(parseSmtpServer('127.0.0.1:2525')).toEqual({ host: '127.0.0.1', port: 2525 });
  });
});
