import { createTransport } from 'nodemailer';
import { ActionException, type ActionImplementation, success } from '../action';
import { pyFormat } from '../python-values';

const addressList = (value: unknown, param: string): string[] => {
  if (value === null || value === undefined || value === '') return [];
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value as string[];
  throw new ActionException(`Failed to send an email message: ${param} must be a list of addresses`);
};

/** `host[:port]` as Python's smtplib.SMTP(host) reads it; the port defaults to 25. */
export const parseSmtpServer = (server: string): { host: string; port: number } => {
  const m = /^\[?([^\]]*?)\]?(?::(\d+))?$/.exec(server.trim());
  const host = m?.[1] ?? '';
  if (host === '')
    throw new ActionException(`Failed to send an email message: invalid smtp_server ${server}`);
  return { host, port: m?.[2] ? Number(m[2]) : 25 };
};

/**
 * std.email: sends one message over SMTP (nodemailer). As the reference: a plain-text part (`<No body>`
 * when empty) plus an HTML alternative when `html_body` is given, subject `<No subject>` when empty,
 * recipients = cc + bcc + to; with `smtp_password` the conversation upgrades with STARTTLS and logs in
 * as `from_addr`, without it no TLS and no login. The result is null.
 */
export const emailAction: ActionImplementation = {
  name: 'std.email',
  className: 'mistral.actions.std_actions.SendEmailAction',
  run: async (input, { signal, config }) => {
    const from = pyFormat(input['from_addr']);
    const to = addressList(input['to_addrs'], 'to_addrs');
    const cc = addressList(input['cc_addrs'], 'cc_addrs');
    const bcc = addressList(input['bcc_addrs'], 'bcc_addrs');
    const replyTo = addressList(input['reply_to'], 'reply_to');
    const password = input['smtp_password'];
    const serverParam = input['smtp_server'];
    if (typeof serverParam !== 'string') {
      throw new ActionException('Failed to send an email message: smtp_server must be a string host[:port]');
    }
    const { host, port } = parseSmtpServer(serverParam);
    const withLogin = password !== null && password !== undefined;
    const transport = createTransport({
      host,
      port,
      secure: false,
      ignoreTLS: !withLogin,
      requireTLS: withLogin,
      auth: withLogin ? { user: from, pass: pyFormat(password) } : undefined,
      connectionTimeout: config.email.timeoutMs,
      greetingTimeout: config.email.timeoutMs,
      socketTimeout: config.email.timeoutMs,
      tls: { rejectUnauthorized: config.email.rejectUnauthorized },
    });
    const onAbort = (): void => transport.close();
    signal.addEventListener('abort', onAbort, { once: true });
    const subject = input['subject'];
    const body = input['body'];
    const html = input['html_body'];
    try {
      await transport.sendMail({
        from,
        to: to.join(', '),
        cc: cc.length > 0 ? cc.join(', ') : undefined,
        replyTo: replyTo.length > 0 ? replyTo.join(', ') : undefined,
        subject: subject ? pyFormat(subject) : '<No subject>',
        text: body ? pyFormat(body) : '<No body>',
        html: html ? pyFormat(html) : undefined,
        envelope: { from, to: [...cc, ...bcc, ...to] },
      });
    } catch (e) {
      throw new ActionException(
        `Failed to send an email message: ${e instanceof Error ? e.message : String(e)}`,
      );
    } finally {
      signal.removeEventListener('abort', onAbort);
      transport.close();
    }
    return success(null);
  },
};
