import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { Api, routes, type ApiRequest } from '../http/api-request';
import { SnapshotsService } from './snapshots.service';

/** `/snapshots` (spec 7.8). */
@Controller(routes('snapshots'))
export class SnapshotsController {
  constructor(private readonly snapshots: SnapshotsService) {}

  @Get()
  list(@Api() api: ApiRequest) {
    return this.snapshots.list(api, false);
  }

  @Get('detail')
  detail(@Api() api: ApiRequest) {
    return this.snapshots.list(api, true);
  }

  @Post()
  @HttpCode(202)
  create(@Api() api: ApiRequest, @Body() body: unknown) {
    return this.snapshots.create(api, body);
  }

  @Get(':id')
  show(@Api() api: ApiRequest, @Param('id') id: string) {
    return this.snapshots.show(api, id);
  }

  @Put(':id')
  update(@Api() api: ApiRequest, @Param('id') id: string, @Body() body: unknown) {
    return this.snapshots.update(api, id, body);
  }

  @Delete(':id')
  @HttpCode(202)
  async remove(@Api() api: ApiRequest, @Param('id') id: string): Promise<void> {
    await this.snapshots.remove(api, id);
  }

  @Post(':id/action')
  @HttpCode(202)
  async action(@Api() api: ApiRequest, @Param('id') id: string, @Body() body: unknown): Promise<void> {
    await this.snapshots.action(api, id, body);
  }

  @Get(':id/metadata')
  metadata(@Api() api: ApiRequest, @Param('id') id: string) {
    return this.snapshots.getMetadata(api, id);
  }

  @Post(':id/metadata')
  @HttpCode(200)
  createMetadata(@Api() api: ApiRequest, @Param('id') id: string, @Body() body: unknown) {
    return this.snapshots.writeMetadata(api, id, body, false);
  }

  @Put(':id/metadata')
  replaceMetadata(@Api() api: ApiRequest, @Param('id') id: string, @Body() body: unknown) {
    return this.snapshots.writeMetadata(api, id, body, true);
  }

  @Get(':id/metadata/:key')
  showMetadata(@Api() api: ApiRequest, @Param('id') id: string, @Param('key') key: string) {
    return this.snapshots.showMetadataItem(api, id, key);
  }

  @Put(':id/metadata/:key')
  updateMetadata(
    @Api() api: ApiRequest,
    @Param('id') id: string,
    @Param('key') key: string,
    @Body() body: unknown,
  ) {
    return this.snapshots.updateMetadataItem(api, id, key, body);
  }

  @Delete(':id/metadata/:key')
  @HttpCode(200)
  async deleteMetadata(
    @Api() api: ApiRequest,
    @Param('id') id: string,
    @Param('key') key: string,
  ): Promise<void> {
    await this.snapshots.deleteMetadataItem(api, id, key);
  }
}
