import { Controller, Get, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { requestBaseUrl } from '@osc/http-common';

/** Mistral's service root: the version list, and the v2 root that only names its own URI. */
@Controller()
export class RootController {
  @Get('/')
  versions(@Req() req: FastifyRequest) {
    const base = requestBaseUrl(req);
    return {
      versions: [
        { id: 'v2.0', status: 'CURRENT', links: [{ href: `${base}/v2`, target: 'v2', rel: 'self' }] },
      ],
    };
  }

  @Get('/v2')
  v2Redirect(@Req() req: FastifyRequest, @Res() reply: FastifyReply) {
    // Fastify's ignoreTrailingSlash maps /v2/ here too; only the bare form redirects.
    if (req.url.split('?')[0]?.endsWith('/')) return reply.send({ uri: `${requestBaseUrl(req)}/v2` });
    return reply.redirect('/v2/', 302);
  }
}
