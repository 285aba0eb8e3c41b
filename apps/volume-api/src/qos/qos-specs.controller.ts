import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { Api, routes, type ApiRequest } from '../http/api-request';
import { QosSpecsService } from './qos-specs.service';

/** `/qos-specs` (admin): specs, their keys, and their volume-type associations. */
@Controller(routes('qos-specs'))
export class QosSpecsController {
  constructor(private readonly qos: QosSpecsService) {}

  @Get()
  list(@Api() api: ApiRequest) {
    return this.qos.list(api);
  }

  @Post()
  @HttpCode(200)
  create(@Api() api: ApiRequest, @Body() body: unknown) {
    return this.qos.create(api, body);
  }

  @Get(':id')
  show(@Api() api: ApiRequest, @Param('id') id: string) {
    return this.qos.show(api, id);
  }

  @Put(':id')
  update(@Api() api: ApiRequest, @Param('id') id: string, @Body() body: unknown) {
    return this.qos.update(api, id, body);
  }

  @Delete(':id')
  @HttpCode(202)
  async remove(@Api() api: ApiRequest, @Param('id') id: string): Promise<void> {
    await this.qos.remove(api, id);
  }

  @Put(':id/delete_keys')
  @HttpCode(202)
  async deleteKeys(@Api() api: ApiRequest, @Param('id') id: string, @Body() body: unknown): Promise<void> {
    await this.qos.deleteKeys(api, id, body);
  }

  @Get(':id/associations')
  associations(@Api() api: ApiRequest, @Param('id') id: string) {
    return this.qos.associations(api, id);
  }

  @Get(':id/associate')
  @HttpCode(202)
  async associate(@Api() api: ApiRequest, @Param('id') id: string): Promise<void> {
    await this.qos.associate(api, id);
  }

  @Get(':id/disassociate')
  @HttpCode(202)
  async disassociate(@Api() api: ApiRequest, @Param('id') id: string): Promise<void> {
    await this.qos.disassociate(api, id);
  }

  @Get(':id/disassociate_all')
  @HttpCode(202)
  async disassociateAll(@Api() api: ApiRequest, @Param('id') id: string): Promise<void> {
    await this.qos.disassociateAll(api, id);
  }
}
