import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Put, Res } from '@nestjs/common';
import { supports } from '@osc/block-storage-domain';
import type { FastifyReply } from 'fastify';
import { Api, routes, type ApiRequest } from '../http/api-request';
import { VolumeActionsService } from './volume-actions.service';
import { VolumeCreateService } from './volume-create.service';
import { VolumeLifecycleService } from './volume-lifecycle.service';
import { VolumeMetadataService } from './volume-metadata.service';
import { VolumesService } from './volumes.service';

/** `/volumes` (spec 7.7). */
@Controller(routes('volumes'))
export class VolumesController {
  constructor(
    private readonly volumes: VolumesService,
    private readonly creation: VolumeCreateService,
    private readonly lifecycle: VolumeLifecycleService,
    private readonly actions: VolumeActionsService,
    private readonly metadataOf: VolumeMetadataService,
  ) {}

  @Get()
  list(@Api() api: ApiRequest) {
    return this.volumes.list(api, false);
  }

  /** The page arrives as JSON text from the database and is sent as it is. */
  @Get('detail')
  async detail(@Api() api: ApiRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const body = await this.volumes.detailJson(api);
    void reply.type('application/json; charset=utf-8');
    return body;
  }

  @Get('summary')
  summary(@Api() api: ApiRequest) {
    return this.volumes.summary(api);
  }

  @Post()
  @HttpCode(202)
  create(@Api() api: ApiRequest, @Body() body: unknown) {
    return this.creation.create(api, body);
  }

  @Get(':id')
  show(@Api() api: ApiRequest, @Param('id') id: string) {
    return this.volumes.show(api, id);
  }

  @Put(':id')
  update(@Api() api: ApiRequest, @Param('id') id: string, @Body() body: unknown) {
    return this.volumes.update(api, id, body);
  }

  @Delete(':id')
  @HttpCode(202)
  async remove(@Api() api: ApiRequest, @Param('id') id: string): Promise<void> {
    await this.lifecycle.remove(api, id);
  }

  @Post(':id/action')
  async action(
    @Api() api: ApiRequest,
    @Param('id') id: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const result = await this.actions.run(api, id, body);
    void reply.code(result.status);
    return result.body ?? '';
  }

  @Get(':id/metadata')
  async metadata(
    @Api() api: ApiRequest,
    @Param('id') id: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const { body, etag } = await this.metadataOf.getMetadata(api, id);
    if (supports(api.mv, 'volume.metadata-etag')) void reply.header('Etag', etag);
    return body;
  }

  @Post(':id/metadata')
  @HttpCode(200)
  createMetadata(@Api() api: ApiRequest, @Param('id') id: string, @Body() body: unknown) {
    return this.metadataOf.mergeMetadata(api, id, body);
  }

  /** From 3.15 an `If-Match` that is not the current ETag gets 412 with an empty body (BS-7.7.13). */
  @Put(':id/metadata')
  async replaceMetadata(
    @Api() api: ApiRequest,
    @Param('id') id: string,
    @Body() body: unknown,
    @Headers('if-match') ifMatch: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const wanted =
      ifMatch !== undefined && supports(api.mv, 'volume.metadata-etag')
        ? ifMatch.split(',').map((t) => t.trim().replace(/^W\//, '').replace(/^"|"$/g, ''))
        : null;
    const written = await this.metadataOf.replaceMetadata(api, id, body, wanted);
    if (written === null) {
      void reply.code(412);
      return '';
    }
    return written;
  }

  @Get(':id/metadata/:key')
  showMetadata(@Api() api: ApiRequest, @Param('id') id: string, @Param('key') key: string) {
    return this.metadataOf.showMetadataItem(api, id, key);
  }

  @Put(':id/metadata/:key')
  updateMetadata(
    @Api() api: ApiRequest,
    @Param('id') id: string,
    @Param('key') key: string,
    @Body() body: unknown,
  ) {
    return this.metadataOf.updateMetadataItem(api, id, key, body);
  }

  @Delete(':id/metadata/:key')
  @HttpCode(200)
  async deleteMetadata(
    @Api() api: ApiRequest,
    @Param('id') id: string,
    @Param('key') key: string,
  ): Promise<void> {
    await this.metadataOf.deleteMetadataItem(api, id, key);
  }
}
