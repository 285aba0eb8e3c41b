import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { rootVersionsDocument, v2VersionDocument, v3VersionDocument } from '@osc/block-storage-domain';
import { NotFoundError } from '@osc/errors';
import { requestBaseUrl } from '@osc/http-common';
import { VOLUME_API_CONFIG, type VolumeApiConfig } from '../volume-api.tokens';

/** Version documents (BS-4.1): `/` is a 300 Multiple Choices listing v3 (and v2 while served). */
@Controller()
export class VersionsController {
  constructor(@Inject(VOLUME_API_CONFIG) private readonly config: VolumeApiConfig) {}

  private base(req: FastifyRequest): string {
    return requestBaseUrl(req, this.config.http.publicUrl);
  }

  @Get('/')
  root(@Req() req: FastifyRequest, @Res() reply: FastifyReply) {
    return reply.code(300).send(rootVersionsDocument(this.base(req), { v2Enabled: this.config.enableV2 }));
  }

  @Get('/v3')
  v3(@Req() req: FastifyRequest) {
    return v3VersionDocument(this.base(req));
  }

  @Get('/v2')
  v2(@Req() req: FastifyRequest) {
    if (!this.config.enableV2) throw new NotFoundError('resource', 'v2', 'The resource could not be found.');
    return v2VersionDocument(this.base(req));
  }
}
