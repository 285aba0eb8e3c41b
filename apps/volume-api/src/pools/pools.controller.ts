import { Controller, Get } from '@nestjs/common';
import { Api, routes, type ApiRequest } from '../http/api-request';
import { PoolsService } from './pools.service';

@Controller(routes('scheduler-stats'))
export class SchedulerStatsController {
  constructor(private readonly pools: PoolsService) {}

  @Get('get_pools')
  getPools(@Api() api: ApiRequest) {
    return this.pools.getPools(api);
  }
}

@Controller(routes('os-availability-zone'))
export class AvailabilityZonesController {
  constructor(private readonly pools: PoolsService) {}

  @Get()
  zones() {
    return this.pools.zones();
  }
}
