import { type DynamicModule, Module } from '@nestjs/common';
import { ServicesController } from './services.controller';
import { SERVICES_SETTINGS, ServicesService, type ServicesSettings } from './services.service';

/** `/v2/services`, and this process's `api` instance heartbeat. */
@Module({})
export class ServicesModule {
  static forRoot(settings: ServicesSettings): DynamicModule {
    return {
      module: ServicesModule,
      controllers: [ServicesController],
      providers: [{ provide: SERVICES_SETTINGS, useValue: settings }, ServicesService],
    };
  }
}
