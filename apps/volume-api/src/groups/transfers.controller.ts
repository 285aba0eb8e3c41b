import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { Api, routes, type ApiRequest } from '../http/api-request';
import { TransfersService, type TransferRoute } from './transfers.service';

/** Both route families of BS-7.10.1 share one implementation. */
function transferController(route: TransferRoute) {
  class TransfersControllerBase {
    constructor(readonly transfers: TransfersService) {}

    @Get()
    list(@Api() api: ApiRequest) {
      return this.transfers.list(api, route, false);
    }

    @Get('detail')
    detail(@Api() api: ApiRequest) {
      return this.transfers.list(api, route, true);
    }

    @Post()
    @HttpCode(202)
    create(@Api() api: ApiRequest, @Body() body: unknown) {
      return this.transfers.create(api, route, body);
    }

    @Get(':id')
    show(@Api() api: ApiRequest, @Param('id') id: string) {
      return this.transfers.show(api, route, id);
    }

    @Delete(':id')
    @HttpCode(202)
    async remove(@Api() api: ApiRequest, @Param('id') id: string): Promise<void> {
      await this.transfers.remove(api, route, id);
    }

    @Post(':id/accept')
    @HttpCode(202)
    accept(@Api() api: ApiRequest, @Param('id') id: string, @Body() body: unknown) {
      return this.transfers.accept(api, route, id, body);
    }
  }
  return TransfersControllerBase;
}

/** `/os-volume-transfer` (v2 and v3). */
@Controller(routes('os-volume-transfer'))
export class LegacyTransfersController extends transferController('legacy') {
  constructor(transfers: TransfersService) {
    super(transfers);
  }
}

/** `/volume-transfers` (3.55+). */
@Controller(routes('volume-transfers', { v2: false }))
export class TransfersController extends transferController('new') {
  constructor(transfers: TransfersService) {
    super(transfers);
  }
}
