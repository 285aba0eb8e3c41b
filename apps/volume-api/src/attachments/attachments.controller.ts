import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { Api, routes, type ApiRequest } from '../http/api-request';
import { AttachmentsService } from './attachments.service';

/** `/attachments` (3.27+; os-complete 3.44): v3 only, as in Cinder. */
@Controller(routes('attachments', { v2: false }))
export class AttachmentsController {
  constructor(private readonly attachments: AttachmentsService) {}

  @Get()
  list(@Api() api: ApiRequest) {
    return this.attachments.list(api, false);
  }

  @Get('detail')
  detail(@Api() api: ApiRequest) {
    return this.attachments.list(api, true);
  }

  @Post()
  @HttpCode(200)
  create(@Api() api: ApiRequest, @Body() body: unknown) {
    return this.attachments.create(api, body);
  }

  @Get(':id')
  show(@Api() api: ApiRequest, @Param('id') id: string) {
    return this.attachments.show(api, id);
  }

  @Put(':id')
  update(@Api() api: ApiRequest, @Param('id') id: string, @Body() body: unknown) {
    return this.attachments.update(api, id, body);
  }

  @Delete(':id')
  remove(@Api() api: ApiRequest, @Param('id') id: string) {
    return this.attachments.remove(api, id);
  }

  @Post(':id/action')
  @HttpCode(204)
  async action(@Api() api: ApiRequest, @Param('id') id: string, @Body() body: unknown): Promise<void> {
    await this.attachments.action(api, id, body);
  }
}
