import { Body, Controller, Delete, Get, Param, Put } from '@nestjs/common';
import { Api, routes, type ApiRequest } from '../http/api-request';
import { QuotasService } from './quotas.service';

@Controller(routes('os-quota-sets'))
export class QuotaSetsController {
  constructor(private readonly quotas: QuotasService) {}

  @Get(':projectId')
  show(@Api() api: ApiRequest, @Param('projectId') projectId: string) {
    return this.quotas.show(api, projectId);
  }

  @Get(':projectId/defaults')
  defaults(@Param('projectId') projectId: string) {
    return this.quotas.defaults(projectId);
  }

  @Put(':projectId')
  update(@Api() api: ApiRequest, @Param('projectId') projectId: string, @Body() body: unknown) {
    return this.quotas.update(api, projectId, body);
  }

  @Delete(':projectId')
  async reset(@Api() api: ApiRequest, @Param('projectId') projectId: string): Promise<void> {
    await this.quotas.reset(api, projectId);
  }
}

@Controller(routes('limits'))
export class LimitsController {
  constructor(private readonly quotas: QuotasService) {}

  @Get()
  limits(@Api() api: ApiRequest) {
    return this.quotas.limits(api);
  }
}
