import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { Api, routes, type ApiRequest } from '../http/api-request';
import { BackupPoliciesService } from './backup-policies.service';

/** `/v3/{project_id}/os-backup-policies` (ours, issue 21; no v2 path, no microversion). */
@Controller(routes('os-backup-policies', { v2: false }))
export class BackupPoliciesController {
  constructor(private readonly policies: BackupPoliciesService) {}

  @Get()
  list(@Api() api: ApiRequest) {
    return this.policies.list(api);
  }

  @Post()
  @HttpCode(200)
  create(@Api() api: ApiRequest, @Body() body: unknown) {
    return this.policies.create(api, body);
  }

  @Get(':id')
  show(@Api() api: ApiRequest, @Param('id') id: string) {
    return this.policies.show(api, id);
  }

  @Put(':id')
  update(@Api() api: ApiRequest, @Param('id') id: string, @Body() body: unknown) {
    return this.policies.update(api, id, body);
  }

  @Delete(':id')
  @HttpCode(202)
  async remove(@Api() api: ApiRequest, @Param('id') id: string): Promise<void> {
    await this.policies.remove(api, id);
  }
}
