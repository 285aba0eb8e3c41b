import { Controller, Get, Query } from '@nestjs/common';
import { type QueryBag, checkKnownParams } from '../definitions/query-values';
import { Authorize } from '../policy/authorize';
import { ServicesService } from './services.service';

/** Mistral v2 `/v2/services`: `{"services": [{"name": "<host>_<pid>", "type": "<kind>_group"}]}`. */
@Controller('v2/services')
export class ServicesController {
  constructor(private readonly services: ServicesService) {}

  @Get()
  @Authorize('services:list')
  async list(@Query() query: QueryBag) {
    checkKnownParams(query, []);
    return { services: await this.services.list() };
  }
}
