import { Body, Controller, Delete, Get, HttpCode, Param, Put } from '@nestjs/common';
import { Api, routes, type ApiRequest } from '../http/api-request';
import { CapabilitiesService } from './capabilities.service';
import { MessagesService } from './messages.service';
import { QuotaClassesService } from './quota-classes.service';
import { ServicesService } from './services.service';

/** `/os-services` (admin). */
@Controller(routes('os-services'))
export class ServicesController {
  constructor(private readonly services: ServicesService) {}

  @Get()
  list(@Api() api: ApiRequest) {
    return this.services.list(api);
  }

  @Put(':action')
  update(@Api() api: ApiRequest, @Param('action') action: string, @Body() body: unknown) {
    return this.services.update(api, action, body);
  }
}

/** `/os-hosts` (admin). */
@Controller(routes('os-hosts'))
export class HostsController {
  constructor(private readonly services: ServicesService) {}

  @Get()
  list(@Api() api: ApiRequest) {
    return this.services.hosts(api);
  }

  @Get(':host')
  show(@Api() api: ApiRequest, @Param('host') host: string) {
    return this.services.host(api, host);
  }
}

/** `/capabilities/{host}` (admin). */
@Controller(routes('capabilities'))
export class CapabilitiesController {
  constructor(private readonly capabilities: CapabilitiesService) {}

  @Get(':host')
  show(@Api() api: ApiRequest, @Param('host') host: string) {
    return this.capabilities.show(api, host);
  }
}

/** `/os-quota-class-sets/{class}` (admin). */
@Controller(routes('os-quota-class-sets'))
export class QuotaClassSetsController {
  constructor(private readonly classes: QuotaClassesService) {}

  @Get(':className')
  show(@Api() api: ApiRequest, @Param('className') className: string) {
    return this.classes.show(api, className);
  }

  @Put(':className')
  update(@Api() api: ApiRequest, @Param('className') className: string, @Body() body: unknown) {
    return this.classes.update(api, className, body);
  }
}

/** `/messages` (3.3). */
@Controller(routes('messages', { v2: false }))
export class MessagesController {
  constructor(private readonly messages: MessagesService) {}

  @Get()
  list(@Api() api: ApiRequest) {
    return this.messages.list(api);
  }

  @Get(':id')
  show(@Api() api: ApiRequest, @Param('id') id: string) {
    return this.messages.show(api, id);
  }

  @Delete(':id')
  @HttpCode(204)
  async remove(@Api() api: ApiRequest, @Param('id') id: string): Promise<void> {
    await this.messages.remove(api, id);
  }
}
