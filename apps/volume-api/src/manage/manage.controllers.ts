import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { Api, routes, type ApiRequest } from '../http/api-request';
import { ManageService } from './manage.service';

/** `POST /manageable_volumes` (v3) and the legacy `POST /os-volume-manage` (v2 and v3): 202 with the volume. */
@Controller([...routes('manageable_volumes', { v2: false }), ...routes('os-volume-manage')])
export class VolumeManageController {
  constructor(private readonly manage: ManageService) {}

  @Post()
  @HttpCode(202)
  create(@Api() api: ApiRequest, @Body() body: unknown) {
    return this.manage.manageVolume(api, body);
  }
}

/** `POST /manageable_snapshots` (v3) and the legacy `POST /os-snapshot-manage` (v2 and v3): 202 with the snapshot. */
@Controller([...routes('manageable_snapshots', { v2: false }), ...routes('os-snapshot-manage')])
export class SnapshotManageController {
  constructor(private readonly manage: ManageService) {}

  @Post()
  @HttpCode(202)
  create(@Api() api: ApiRequest, @Body() body: unknown) {
    return this.manage.manageSnapshot(api, body);
  }
}
