import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { Api, routes, type ApiRequest } from '../http/api-request';
import { ManageService } from './manage.service';

/** `/manageable_volumes` (v3) and the legacy `/os-volume-manage` (v2, v3): POST manages (202), GET lists (3.8). */
@Controller([...routes('manageable_volumes', { v2: false }), ...routes('os-volume-manage')])
export class VolumeManageController {
  constructor(private readonly manage: ManageService) {}

  @Get()
  list(@Api() api: ApiRequest) {
    return this.manage.listVolumes(api, false);
  }

  @Get('detail')
  detail(@Api() api: ApiRequest) {
    return this.manage.listVolumes(api, true);
  }

  @Post()
  @HttpCode(202)
  create(@Api() api: ApiRequest, @Body() body: unknown) {
    return this.manage.manageVolume(api, body);
  }
}

/** `/manageable_snapshots` (v3) and the legacy `/os-snapshot-manage` (v2, v3): POST manages (202), GET lists (3.8). */
@Controller([...routes('manageable_snapshots', { v2: false }), ...routes('os-snapshot-manage')])
export class SnapshotManageController {
  constructor(private readonly manage: ManageService) {}

  @Get()
  list(@Api() api: ApiRequest) {
    return this.manage.listSnapshots(api, false);
  }

  @Get('detail')
  detail(@Api() api: ApiRequest) {
    return this.manage.listSnapshots(api, true);
  }

  @Post()
  @HttpCode(202)
  create(@Api() api: ApiRequest, @Body() body: unknown) {
    return this.manage.manageSnapshot(api, body);
  }
}
