import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CONSOLE_SETTINGS, type ConsoleSettings } from './console-settings';
import { resolveConsoleFile } from './console-files';

/**
 * Request headers the block-storage pass-through forwards: identity (every auth mode), microversion,
 * and our opt-in backup progress extension (docs/block-storage.md).
 */
const FORWARDED_HEADERS = [
  'x-auth-token',
  'x-user-id',
  'x-project-id',
  'x-roles',
  'openstack-api-version',
  'accept',
  'x-osc-backup-progress',
] as const;

/**
 * The operator console (apps/console): its static files, its settings, and a read-only pass-through
 * to the block-storage API. Public paths (no token needed to load the page); every API call the page
 * makes carries the user's token and is authorised by the API it reaches.
 */
@Controller('console')
export class ConsoleController {
  constructor(@Inject(CONSOLE_SETTINGS) private readonly settings: ConsoleSettings) {}

  @Get('config.json')
  config() {
    return { auth_mode: this.settings.authMode, block_storage: this.settings.volumeApiUrl !== undefined };
  }

  /** GET only: the console shows block storage and changes nothing there. */
  @Get('block-storage/*')
  async blockStorage(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const base = this.settings.volumeApiUrl;
    if (base === undefined) {
      await reply
        .code(404)
        .type('application/json')
        .send({ message: 'Block storage is not configured for this console (CONSOLE_VOLUME_API_URL).' });
      return;
    }
    const rest = req.url.replace(/^\/console\/block-storage/, '');
    const headers: Record<string, string> = {};
    for (const name of FORWARDED_HEADERS) {
      const v = req.headers[name];
      if (typeof v === 'string') headers[name] = v;
    }
    let res: Response;
    try {
      res = await fetch(`${base}${rest}`, { headers, signal: AbortSignal.timeout(30_000) });
    } catch {
      await reply
        .code(502)
        .type('application/json')
        .send({ message: 'The block-storage API does not answer.' });
      return;
    }
    const out: Record<string, string> = {};
    for (const name of [
      'content-type',
      'openstack-api-version',
      'x-openstack-request-id',
      'www-authenticate',
    ]) {
      const v = res.headers.get(name);
      if (v !== null) out[name] = v;
    }
    await reply
      .code(res.status)
      .headers(out)
      .send(Buffer.from(await res.arrayBuffer()));
  }

  @Get()
  root(@Res() reply: FastifyReply): Promise<void> {
    return this.file('/console', reply);
  }

  @Get('*')
  page(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.file(req.url.split('?', 1)[0] ?? '/console', reply);
  }

  private async file(urlPath: string, reply: FastifyReply): Promise<void> {
    let file;
    try {
      file = await resolveConsoleFile(this.settings.dir, urlPath);
    } catch {
      await reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .send(
          `The console is not built in ${this.settings.dir}: run \`npm run build:console\` (npm start builds it).`,
        );
      return;
    }
    if (file === null) {
      await reply.code(404).type('text/plain; charset=utf-8').send('Not found');
      return;
    }
    await reply
      .code(200)
      .header('cache-control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
      .header('x-content-type-options', 'nosniff')
      .type(file.contentType)
      .send(file.body);
  }
}
